import { createHash } from 'node:crypto';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { tinyGguf } from './tiny-gguf.ts';

/**
 * The tiny model's file, written on first use into the user's cache (`$XDG_CACHE_HOME/swarm-lab`,
 * else `~/.cache/swarm-lab`) under its content hash, so a changed generator never reuses a stale file.
 */
export async function tinyModelFile(cacheDir = defaultCacheDir()): Promise<string> {
  const bytes = tinyGguf();
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
  const file = join(cacheDir, `swarm-lab-tiny-${hash}.gguf`);
  const existing = await stat(file).catch(() => null);
  if (existing?.size === bytes.length) return file;
  await mkdir(cacheDir, { recursive: true });
  // Written aside and renamed: a parallel test or a killed writer never leaves half a model under the name.
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, bytes);
  await rename(partial, file);
  return file;
}

function defaultCacheDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'swarm-lab');
}

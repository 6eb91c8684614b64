import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** A file's sha256 (hex), streamed: a prompts file of a million lines is never held whole for it. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

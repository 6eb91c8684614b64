import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A small disk to fill (ENOSPC): a tmpfs mounted on a fresh folder, or why this machine gives none. */
export interface SmallDisk {
  dir: string;
  /** Why there is no disk (for a test's `skip`), or false. */
  skip: string | false;
  remove(): void;
}

/** Mounts a `kb` KiB tmpfs (root on Linux); anywhere else, says why not on stderr so a skipped test is seen. */
export function smallDisk(kb: number): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-enospc-'));
  const mounted = process.platform === 'linux' ? spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${kb}k`, 'tmpfs', dir], { encoding: 'utf8' }) : null;
  const skip = !mounted ? 'mounting a tmpfs needs Linux' : mounted.status === 0 ? false : `cannot mount a tmpfs here: ${(mounted.stderr || mounted.error?.message || `mount exited ${mounted.status}`).trim()}`;
  if (skip) process.stderr.write(`skipping the full-disk tests: ${skip}\n`);
  return {
    dir,
    skip,
    remove() {
      if (!skip) spawnSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readStatus, STATUS_FILE, type RunStatus } from './status.ts';

/**
 * Where detached runs live: one folder each under `$SWARM_RUNS_DIR`, else `~/.swarm-lab/runs` —
 * on a cluster the home folder is on the shared filesystem, so a run started on one login node is
 * listed from another.
 */
export function runsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.SWARM_RUNS_DIR || join(homedir(), '.swarm-lab', 'runs');
}

/** A run id: sortable by start time, unique without coordination (`20261126-104228-3fa9c1`). */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

/** A run id as a user may type it: only these characters, so it is safe in a path and a remote command. */
export const RUN_ID = /^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$/;

/** Every run under `root` with a status file, oldest first. */
export function listRuns(root: string): RunStatus[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names
    .filter((n) => RUN_ID.test(n))
    .sort()
    .map((n) => readStatus(join(root, n, STATUS_FILE)))
    .filter((s): s is RunStatus => s !== undefined);
}

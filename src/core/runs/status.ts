import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * A detached run's small status file (`status.json` in its folder), replaced whole (written beside,
 * then renamed) so a reader — `swarm runs`, `swarm attach`, through the SSH login or not — never
 * sees half of one. The run's results file is the truth about prompts; this says how far it got.
 */
export interface RunStatus {
  id: string;
  /** What was run: the command and its arguments as given to the run (no secrets: keys travel in the environment). */
  command: string[];
  /** `running` until the process ends and says how; `died` is never written, only concluded by readers (see liveState). */
  state: 'starting' | 'running' | 'finished';
  pid: number;
  /** The host the run's process lives on: its pid means something only there. */
  host: string;
  startedAt: string;
  updatedAt: string;
  wallMs: number;
  total: number;
  done: number;
  ok: number;
  failed: number;
  cancelled: number;
  /** The last few distinct failure reasons, newest last. */
  errors: string[];
  /**
   * The last few distinct warnings (a hedge, a slow endpoint, a lost tunnel healed), newest last: what
   * the run said on the way, not why a prompt failed. Absent in status files of older versions.
   */
  warnings?: string[];
  /** The run's exit code (the CLI's contract: 0 all ok, 1 some failed, 2 bad input, 130/143/129 a signal). */
  exitCode?: number;
  /** The results file, relative to the run's folder (absent for a command whose outcome is its output). */
  results?: string;
}

export const STATUS_FILE = 'status.json';

/** Replaces the status file whole; synchronous, so it also works from an exit handler. */
export function writeStatus(path: string, status: RunStatus): void {
  replaceJson(path, status);
}

/** Writes `value` as JSON beside `path` and renames it over: a reader sees the old file or the new one, whole. */
export function replaceJson(path: string, value: unknown): void {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(value)}\n`);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** The status file, or undefined when there is none (yet). */
export function readStatus(path: string): RunStatus | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return parseStatus(text);
}

export function parseStatus(text: string): RunStatus | undefined {
  try {
    const s = JSON.parse(text) as RunStatus;
    return s && typeof s === 'object' && typeof s.id === 'string' && typeof s.state === 'string' ? s : undefined;
  } catch {
    return undefined;
  }
}

/** What a reader makes of a status: `died` when it says running but its process is gone. */
export type LiveState = 'starting' | 'running' | 'finished' | 'died' | 'elsewhere';

/**
 * The state as seen from `host`: a run still marked running whose process no longer exists died
 * (killed, or its node rebooted) — its finished rows are in its results file's `.partial`. A run on
 * another host (another login node) cannot be checked from here.
 */
export function liveState(status: RunStatus, host: string, alive: (pid: number) => boolean): LiveState {
  if (status.state === 'finished') return 'finished';
  if (status.host !== host) return 'elsewhere';
  return alive(status.pid) ? status.state : 'died';
}

/** Whether process `pid` exists on this machine (EPERM: it does, someone else's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stops a run on this machine the way Ctrl-C would: SIGTERM to its session's process group (it was
 * started detached, so its shards and launcher are in it too). False when it is gone already.
 */
export function stopRun(status: Pick<RunStatus, 'pid'>): boolean {
  try {
    process.kill(-status.pid, 'SIGTERM');
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    return false;
  }
}

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { onExit } from './interrupt.ts';

/**
 * Runs going on from this folder, one small file each (`.swarm/active/<pid>.json`), so `swarm drain`
 * can find them: written as a run starts, removed as it ends (also when the process exits early).
 */
export const ACTIVE_FOLDER = join('.swarm', 'active');

/** The signal that drains a run (SIGUSR1 is Node's debugger; SIGINT/TERM/HUP cancel). */
export const DRAIN_SIGNAL = 'SIGUSR2';

export interface ActiveRun {
  pid: number;
  /** `swarm scatter …` as typed (minus node and the script), for the listing. */
  argv: string[];
  /** The hostfile it runs on, absolute (a launched job's, to drain the runs of one job). */
  hostfile?: string;
  startedAt: string;
}

/** Announces this process's run until the returned function is called (or the process exits). */
export function registerRun(hostfile: string | undefined): () => void {
  const file = join(ACTIVE_FOLDER, `${process.pid}.json`);
  const entry: ActiveRun = { pid: process.pid, argv: process.argv.slice(2), ...(hostfile ? { hostfile: resolve(hostfile) } : {}), startedAt: new Date().toISOString() };
  try {
    mkdirSync(ACTIVE_FOLDER, { recursive: true });
    writeFileSync(file, `${JSON.stringify(entry)}\n`);
  } catch {
    return () => undefined; // a read-only folder: the run goes on, `swarm drain` just cannot find it (the signal still works)
  }
  const remove = () => rmSync(file, { force: true });
  const forget = onExit(remove);
  return () => {
    forget();
    remove();
  };
}

/** The runs of this folder still going; files of processes gone (killed hard) are removed. */
export function activeRuns(): ActiveRun[] {
  let names: string[];
  try {
    names = readdirSync(ACTIVE_FOLDER).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const runs: ActiveRun[] = [];
  for (const name of names) {
    const file = join(ACTIVE_FOLDER, name);
    let entry: ActiveRun | undefined;
    try {
      entry = JSON.parse(readFileSync(file, 'utf8')) as ActiveRun;
    } catch {
      entry = undefined;
    }
    if (entry && isSwarm(entry.pid)) runs.push(entry);
    else rmSync(file, { force: true });
  }
  return runs.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

/** Alive and still a swarm process: a pid reused by something else must never get our signal. */
function isSwarm(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return /swarm|cli\.js/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return true; // no /proc (macOS): alive is all we can tell
  }
}

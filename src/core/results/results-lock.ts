import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';

/** Another run writes this results file. */
export class ResultsLockedError extends Error {
  override name = 'ResultsLockedError';
}

/** A run's claim on a results file: `<file>.lock`, naming the process that writes it. */
export interface ResultsLock {
  readonly path: string;
  /** Removes the lock file if it is still ours; safe to call twice. */
  release(): void;
}

interface Holder {
  pid: number;
  host: string;
  since: string;
}

/**
 * Claims `path` for one writer, or throws ResultsLockedError naming the one that has it. The claim is
 * a file made whole under a private name and linked into place: link(2) fails when the lock exists,
 * on local disks and NFS alike, and no one ever sees a lock without its holder. A lock whose process
 * is gone (killed, on this host) is taken over; one held on another host is respected, as its
 * process cannot be asked.
 */
export function lockResults(path: string): ResultsLock {
  const lockPath = `${path}.lock`;
  const me: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  const mine = `${lockPath}.${process.pid}`;
  const fd = openSync(mine, 'w');
  try {
    writeSync(fd, `${JSON.stringify(me)}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    // A stale lock broken by us may be re-taken at once by another run: then that run holds it.
    for (let tries = 0; tries < 3; tries++) {
      try {
        linkSync(mine, lockPath);
        return claim(lockPath, me);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = readHolder(lockPath);
      if (holder === undefined) continue; // gone since: try again
      if (!holder || alive(holder)) throw locked(path, lockPath, holder);
      breakStale(lockPath);
    }
    throw locked(path, lockPath, readHolder(lockPath) ?? null);
  } finally {
    unlinkSync(mine);
  }
}

function claim(lockPath: string, me: Holder): ResultsLock {
  let held = true;
  return {
    path: lockPath,
    release() {
      if (!held) return;
      held = false;
      const holder = readHolder(lockPath);
      if (holder && holder.pid === me.pid && holder.host === me.host && holder.since === me.since) unlinkSync(lockPath);
    },
  };
}

/**
 * Moves a dead run's lock aside (only one of several runs doing this at once succeeds) and checks
 * what was moved: a live lock taken in between goes back.
 */
function breakStale(lockPath: string): void {
  const aside = `${lockPath}.${process.pid}.stale`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return; // another run moved it first
  }
  const moved = readHolder(aside);
  if (moved && alive(moved)) {
    try {
      linkSync(aside, lockPath);
    } catch {
      // a third run has taken the lock meanwhile: it holds it now
    }
  }
  unlinkSync(aside);
}

/** The lock's holder; null when the file says nothing we can read, undefined when there is no file. */
function readHolder(lockPath: string): Holder | null | undefined {
  let text: string;
  try {
    text = readFileSync(lockPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    return Number.isInteger(h.pid) && typeof h.host === 'string' && typeof h.since === 'string' ? (h as Holder) : null;
  } catch {
    return null;
  }
}

/** Whether the holder may still be running: a process on another host cannot be asked, so it counts as alive. */
function alive(holder: Holder): boolean {
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function locked(path: string, lockPath: string, holder: Holder | null): ResultsLockedError {
  const who = holder ? `process ${holder.pid} on ${holder.host}, since ${holder.since}` : 'another run';
  return new ResultsLockedError(`${path} is being written by ${who}; wait for it to end or choose another file (if no run writes it, delete ${lockPath})`);
}

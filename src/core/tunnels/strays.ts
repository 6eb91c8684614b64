import { execFile } from 'node:child_process';
import { childEnv } from './child-env.ts';

/**
 * Ends every ssh master started on our own control socket that is not the one we keep: a master
 * whose socket went stale, a login attempt that forked (`-f`) and then failed. Found by the
 * socket's path, which is random and ours alone, so nothing else the user runs is touched.
 */
export async function reapMasters(controlPath: string, keep?: number): Promise<number[]> {
  const pids = (await listProcesses()).filter(({ pid, args }) => pid !== keep && pid !== process.pid && args.includes(controlPath) && /(^|\s)-M(\s|$)/.test(args)).map((p) => p.pid);
  for (const pid of pids) signal(pid, 'SIGTERM');
  const deadline = Date.now() + 3_000;
  for (let left = pids; left.length; left = left.filter(running)) {
    if (Date.now() > deadline) {
      left.forEach((pid) => signal(pid, 'SIGKILL'));
      break;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return pids;
}

function listProcesses(): Promise<Array<{ pid: number; args: string }>> {
  if (process.platform === 'win32') return Promise.resolve([]); // no ControlMaster there
  return new Promise((resolve) => {
    // `ps -A -o pid=,args=` reads the same on Linux and macOS.
    execFile('ps', ['-A', '-o', 'pid=,args='], { env: childEnv(), maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err) return resolve([]);
      resolve(stdout.split('\n').flatMap((line) => {
        const m = /^\s*(\d+)\s+(.*)$/.exec(line);
        return m ? [{ pid: Number(m[1]), args: m[2]! }] : [];
      }));
    });
  });
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** Alive: `-f` reparents masters away from us, so none lingers as our zombie. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return true;
}

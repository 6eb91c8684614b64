import { posix } from 'node:path';
import { parseStatus, type LiveState, type RunStatus } from '../core/runs/status.ts';
import { sshHost } from '../core/scheduler/ssh-host.ts';
import type { SshMaster } from '../core/tunnels/master.ts';

/** A detached run as the view shows it: its status file, and what that means from here. */
export interface DetachedRun extends RunStatus {
  live: LiveState;
  folder: string;
  /** The SSH login it was listed through (a run on the login node), none for a run here. */
  login?: string;
}

/**
 * One command over the login, whatever the number of runs: the login node's name, then for each
 * run folder under `$1` whether its process lives there (`kill -0` of the status's pid) and its
 * status file (one line of JSON). Only sh, sed and cat: the site's node need not be loaded for it.
 */
const LIST = 'cd "$1" 2>/dev/null || exit 0; hostname; for f in */status.json; do [ -f "$f" ] || continue; pid=$(sed -n \'s/.*"pid":\\([0-9]*\\).*/\\1/p\' "$f"); if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo alive; else echo gone; fi; cat "$f"; done';

/** Detached runs on the login node the connected swarm's SSH login reaches: listed and cancelled over that one login. */
export class RemoteRuns {
  constructor(
    readonly label: string,
    private readonly master: SshMaster,
    /** The runs folder there (relative: to the home folder), as `swarm … --runs-dir` takes it. */
    readonly root: string,
  ) {}

  async list(): Promise<DetachedRun[]> {
    const r = await sshHost(this.master).run(['sh', '-c', LIST, 'sh', this.root], { timeoutMs: 30_000 });
    if (r.code !== 0) throw new Error(`listing ${this.root} on ${this.label}: ${r.stderr.trim() || `exit ${r.code}`}`);
    const [host = '', ...rest] = r.stdout.split('\n');
    const runs: DetachedRun[] = [];
    for (let i = 0; i + 1 < rest.length; i += 2) {
      const status = parseStatus(rest[i + 1]!);
      if (!status) continue;
      const live: LiveState = status.state === 'finished' ? 'finished' : status.host !== host ? 'elsewhere' : rest[i] === 'alive' ? status.state : 'died';
      runs.push({ ...status, live, folder: posix.join(this.root, status.id), login: this.label });
    }
    return runs.reverse();
  }

  /**
   * A run's results file there (and, with `partial`, the rows its `.partial` holds so far, after it):
   * one command over the login; a file not there yet reads as nothing.
   */
  async read(path: string, partial: boolean): Promise<string> {
    const script = partial ? 'cat -- "$1" 2>/dev/null; cat -- "$1.partial" 2>/dev/null; exit 0' : 'cat -- "$1" 2>/dev/null; exit 0';
    const r = await sshHost(this.master).run(['sh', '-c', script, 'sh', path], { timeoutMs: 120_000 });
    if (r.code !== 0) throw new Error(`reading ${path} on ${this.label}: ${r.stderr.trim() || `exit ${r.code}`}`);
    return r.stdout;
  }

  /** Stops a run as `swarm cancel` does: SIGTERM to its process group, there. */
  async cancel(run: DetachedRun): Promise<void> {
    const r = await sshHost(this.master).run(['kill', '-TERM', '--', `-${run.pid}`], { timeoutMs: 30_000 });
    if (r.code !== 0) throw new Error(`cancelling run ${run.id} on ${this.label}: ${r.stderr.trim() || `exit ${r.code}`}`);
  }
}

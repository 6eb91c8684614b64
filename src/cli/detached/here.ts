import { join } from 'node:path';
import { hostname } from 'node:os';
import { listRuns, liveState, processAlive, readStatus, RUN_ID, STATUS_FILE, stopRun, type LiveState, type RunStatus } from '../../core/index.ts';
import { CliError } from '../exit.ts';

/** A run as `swarm runs` and `swarm attach` show it: its status, what that means from here, where it is. */
export interface RunView extends RunStatus {
  live: LiveState;
  folder: string;
}

/** How long a cancel waits for the run to write its results file and end. */
const CANCEL_WAIT_MS = 120_000;

function view(root: string, status: RunStatus): RunView {
  return { ...status, live: liveState(status, hostname(), processAlive), folder: join(root, status.id) };
}

/** The runs under `root` on this machine (one when `id` is given: bad input when there is no such run). */
export function runsHere(root: string, id?: string): RunView[] {
  if (id === undefined) return listRuns(root).map((s) => view(root, s));
  checkId(id);
  const status = readStatus(join(root, id, STATUS_FILE));
  if (!status) throw new CliError(`no run ${id} in ${root}`);
  return [view(root, status)];
}

export function checkId(id: string): void {
  if (!RUN_ID.test(id)) throw new CliError(`${JSON.stringify(id.slice(0, 40))} is not a run id (like 20261126-104228-3fa9c1; see swarm runs)`);
}

/**
 * Stops a run on this machine the way Ctrl-C would (SIGTERM to its session): it cancels what is in
 * flight, writes every finished result and a cancelled row for the rest, in input order, and ends.
 * Resolves with its final view once it has (or once its process is gone).
 */
export async function cancelHere(root: string, id: string): Promise<RunView> {
  const [run] = runsHere(root, id);
  if (run!.live === 'elsewhere') throw new CliError(`run ${id} lives on ${run!.host}, not on ${hostname()}: cancel it there`, 1);
  if (run!.live !== 'running' && run!.live !== 'starting') return run!;
  stopRun(run!);
  const deadline = Date.now() + CANCEL_WAIT_MS;
  for (;;) {
    const now = runsHere(root, id)[0]!;
    if (now.live === 'finished' || now.live === 'died' || Date.now() > deadline) return now;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Every message between the experiment view (webview/experiment/) and the host
 * (src/extension/experiment/). The host runs `swarm run FILE --out FOLDER` (the bundled CLI) and reads
 * what it writes: each run's record as it finishes (its summary, the servers' readings against time,
 * the client's own cost), then the sweep's table and the planner's predictions. The host states the
 * experiment's lifecycle; the view only draws the latest `experiment` message.
 */
import type { ClientOverhead, PredictedRun, RunSummary, SweepRow } from '../core/index.ts';
import type { ServerLoad } from '../core/endpoints/server-metrics.ts';

export type { ServerLoad, SweepRow };

/** One finished run of an experiment, as its record says. */
export interface ExperimentRun {
  name: string;
  point: { value: number | null; arm: string; repetition: number };
  summary: Pick<RunSummary, 'wallMs' | 'prompts' | 'ok' | 'failed' | 'promptThroughput' | 'outputTokenThroughput'> & { ttftMedianMs: number | null };
  client: ClientOverhead | null;
  /** The servers' readings during it, each aggregated over its endpoints (sums and median/p90 bands). */
  servers: ServerLoad[];
}

export type ExperimentStatus = 'running' | 'finished' | 'failed' | 'stopped';

export interface ExperimentView {
  /** The experiment file, and the folder its runs go to. */
  file: string;
  folder: string;
  status: ExperimentStatus;
  /** The CLI's first error line when it failed (exit 2: bad input; 1: some prompts failed). */
  error: string | null;
  exitCode: number | null;
  /** Runs finished so far, in the order they ran. */
  runs: ExperimentRun[];
  /** The run under way: the servers' readings so far (its record, with the client's figures, comes at its end). */
  live: Pick<ExperimentRun, 'name' | 'servers'> | null;
  /** Once every run is in: the sweep's table and the planner beside each run. */
  sweep: { parameter: string; metric: string; rows: SweepRow[]; plan: { fittedOn: string | null; rows: PredictedRun[]; note: string | null } } | null;
}

/** Host → experiment view. */
export type ExperimentHostMessage = { type: 'experiment'; view: ExperimentView };
/** Experiment view → host: `ready` (then the host sends the latest view), `stop` (end the run; finished runs are kept). */
export type ExperimentViewMessage = { type: 'ready' } | { type: 'stop' };

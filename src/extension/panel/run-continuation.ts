import { planRetryFailed, ResumeError, type Continued, type SavedRow } from '../../core/index.ts';
import type { PromptRow, ResultRow, RunRequest } from '../../panel/protocol.ts';
import type { RunHistory, SavedRun } from './run-history.ts';
import { LaunchError } from './run-request-plan.ts';

/** "Rerun failed": the failed prompts of a run; "Run remaining": the cancelled ones (never answered). */
export type ContinueWhat = 'failed' | 'remaining';

/**
 * A new run of some prompts of a saved one, merged back into a copy of its results (the CLI's
 * `--retry-failed`, with the core's plan): the new run's results file starts as the old one, its
 * answers replace the rows it sends again, and it ends in input order.
 */
export interface Continuation {
  /** The saved run's results file, copied to the new run's before it starts. */
  from: string;
  /** Input indices the new run sends, in order (its prompt i is the run's prompt todo[i]). */
  todo: number[];
  /** Rows of the copy that stay, where they are in it. */
  continued: Continued;
  /** Those rows in full, shown in the panel from the start. */
  kept: ResultRow[];
  /** Every prompt of the run, by index (pending rows show theirs). */
  prompts: string[];
}

const RETRY: Record<ContinueWhat, (row: SavedRow) => boolean> = {
  failed: (row) => row.status === 'failed',
  remaining: (row) => row.status === 'cancelled',
};

/** What to run to continue `saved`; throws LaunchError when there is nothing to, or it cannot be. */
export async function planContinuation(history: RunHistory, saved: SavedRun, what: ContinueWhat): Promise<{ request: RunRequest; label: string; continuation: Continuation }> {
  const r = saved.record;
  // Only these runs have one prompt per row, known by index (a comparison's rows are one arm's).
  if (r.mode === 'compare' || (r.pattern !== 'scatter' && r.pattern !== 'map')) throw new LaunchError(`only scatter and map runs can be continued; "${r.label}" is a ${r.mode === 'compare' ? 'comparison' : r.pattern}`);
  const from = history.pathOf(r.file);
  let plan;
  try {
    plan = planRetryFailed(from, RETRY[what]);
  } catch (err) {
    throw err instanceof ResumeError ? new LaunchError(err.message) : err;
  }
  // The new run starts from a copy of the results file alone: rows of an unfinished write beside it would not be in it.
  if (plan.continued.partialSize) throw new LaunchError(`"${r.label}" was not finished writing its results (${r.file}.partial is left); open it to see them`);
  if (!plan.todo.length) throw new LaunchError(`"${r.label}" has no ${what === 'failed' ? 'failed' : 'cancelled'} prompts`);
  const sent = new Set(plan.todo);
  const kept = (await history.rows(saved)).filter((row) => !sent.has(row.index));
  const prompts: PromptRow[] = plan.todo.map((i) => {
    const p = plan.prompts[i]!;
    return p.input && Object.keys(p.input).length ? { prompt: p.prompt, input: p.input } : { prompt: p.prompt };
  });
  const { compare: _, items: __, template: ___, ...rest } = saved.request;
  const n = plan.todo.length.toLocaleString('en-US');
  return {
    // The prompts are already made (a map's templates filled): the new run scatters them.
    request: { ...rest, pattern: 'scatter', prompts },
    label: `${r.label} · ${what === 'failed' ? `rerun ${n} failed` : `${n} remaining`}`,
    continuation: { from, todo: plan.todo, continued: plan.continued, kept, prompts: plan.prompts.map((p) => p.prompt) },
  };
}

/**
 * Which saved runs can be continued ("Rerun failed", "Run remaining": the host's continueRun) and
 * with how many prompts. Pure.
 */
import type { Pattern, RunRecord } from '../../src/panel/protocol.ts';

export type ContinueWhat = 'failed' | 'remaining';

/** Failed and cancelled prompts of a finished, saved scatter or map run (a comparison's rows are one arm's: none). */
export function continuable(run: { pattern: Pattern; mode: RunRecord['mode']; summary: Pick<RunRecord['summary'], 'failed' | 'cancelled'> | null }): Record<ContinueWhat, number> {
  const s = run.summary;
  if (!s || run.mode === 'compare' || (run.pattern !== 'scatter' && run.pattern !== 'map')) return { failed: 0, remaining: 0 };
  return { failed: s.failed, remaining: s.cancelled };
}

export const CONTINUE_HELP: Record<ContinueWhat, string> = {
  failed: "A new run of this run's failed prompts on its hostfile; their answers are merged into a copy of its results, in input order",
  remaining: "A new run of this run's cancelled (never answered) prompts on its hostfile; their answers are merged into a copy of its results, in input order",
};

import type { PromptResult } from './result.ts';

/**
 * One prompt's latencies, ms (null where not measured): E2EL from its request's send to its answer;
 * streamed only, TTFT and TPOT as vLLM bench has them: TPOT = (latency − TTFT) / (output tokens − 1),
 * for outputs of more than one token. The summary and the panel's per-prompt columns both use it.
 */
export function promptLatencies(r: PromptResult): { e2el: number | null; ttft: number | null; tpot: number | null } {
  const t = r.timings;
  if (t.sentMs === null) return { e2el: null, ttft: null, tpot: null };
  const e2el = t.doneMs - t.sentMs;
  if (t.firstTokenMs === null) return { e2el, ttft: null, tpot: null };
  const tpot = r.completionTokens !== null && r.completionTokens > 1 ? (t.doneMs - t.firstTokenMs) / (r.completionTokens - 1) : null;
  return { e2el, ttft: t.firstTokenMs - t.sentMs, tpot };
}

/**
 * The latency figures of a run's summary in vLLM-bench vocabulary: E2EL always, TTFT, TPOT and ITL
 * when it was streamed; each as mean, p50, p90 and p99 (the core's LatencyStats). Pure.
 */
import type { LatencyStats, RunSummary } from '../../src/core/summary.ts';

export const LATENCY_STATS: ReadonlyArray<[label: string, key: keyof LatencyStats]> = [
  ['mean', 'meanMs'],
  ['p50', 'medianMs'],
  ['p90', 'p90Ms'],
  ['p99', 'p99Ms'],
];

type Metric = 'e2el' | 'ttft' | 'tpot' | 'itl';
const METRICS: ReadonlyArray<[label: string, key: Metric]> = [
  ['E2EL', 'e2el'],
  ['TTFT', 'ttft'],
  ['TPOT', 'tpot'],
  ['ITL', 'itl'],
];

/** The metrics a summary has: E2EL, and the streamed ones when any of `summaries` was streamed. */
export function latencyMetrics(...summaries: RunSummary[]): Array<{ label: string; pick: (s: RunSummary) => LatencyStats | null }> {
  const streamed = summaries.some((s) => s.streamed);
  return METRICS.filter(([, key]) => streamed || key === 'e2el').map(([label, key]) => ({ label, pick: (s) => s[key] ?? null }));
}

/** One figure per metric and statistic (`TTFT p90`…), for tables that list figures row by row. */
export function latencyFigures(...summaries: RunSummary[]): Array<{ label: string; pick: (s: RunSummary) => number | null }> {
  return latencyMetrics(...summaries).flatMap((m) => LATENCY_STATS.map(([stat, key]) => ({ label: `${m.label} ${stat}`, pick: (s: RunSummary) => m.pick(s)?.[key] ?? null })));
}

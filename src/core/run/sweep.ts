import { percentile } from './stats.ts';
import type { RunSummary } from './summary.ts';

/** What one point of a sweep may be measured by; each reads one number off a run's summary (null: not measured). */
export const SWEEP_METRICS = {
  wall_s: (s: RunSummary) => s.wallMs / 1000,
  prompt_throughput: (s: RunSummary) => s.promptThroughput,
  output_token_throughput: (s: RunSummary) => s.outputTokenThroughput,
  goodput: (s: RunSummary) => s.goodput?.perSecond ?? null,
  e2el_median_ms: (s: RunSummary) => s.e2el?.medianMs ?? null,
  ttft_median_ms: (s: RunSummary) => s.ttft?.medianMs ?? null,
  tpot_median_ms: (s: RunSummary) => s.tpot?.medianMs ?? null,
} as const satisfies Record<string, (s: RunSummary) => number | null>;

export type SweepMetric = keyof typeof SWEEP_METRICS;

/** A metric over a point's repetitions: the median and the interquartile range (numpy's linear quartiles). */
export interface Spread {
  n: number;
  median: number;
  q1: number;
  q3: number;
}

export function spread(values: readonly number[]): Spread | null {
  if (!values.length) return null;
  const sorted = Float64Array.from(values).sort();
  return { n: sorted.length, median: percentile(sorted, 50), q1: percentile(sorted, 25), q3: percentile(sorted, 75) };
}

/** One row of a sweep's table: a parameter value and arm, every metric's spread over the repetitions. */
export interface SweepRow {
  value: number;
  arm: string;
  runs: number;
  metrics: Partial<Record<SweepMetric, Spread>>;
}

/** The table of a sweep from each run's summary, in the order the points were given. */
export function sweepRows(points: ReadonlyArray<{ value: number; arm: string; summaries: readonly RunSummary[] }>): SweepRow[] {
  return points.map(({ value, arm, summaries }) => {
    const metrics: Partial<Record<SweepMetric, Spread>> = {};
    for (const [name, read] of Object.entries(SWEEP_METRICS) as Array<[SweepMetric, (s: RunSummary) => number | null]>) {
      const s = spread(summaries.map(read).filter((v): v is number => v !== null));
      if (s) metrics[name] = s;
    }
    return { value, arm, runs: summaries.length, metrics };
  });
}

/** The table as CSV: one line per parameter value, arm and metric. */
export function sweepCsv(parameter: string, rows: readonly SweepRow[]): string {
  const lines = [`${parameter},arm,metric,median,q1,q3,n`];
  for (const r of rows) for (const [metric, s] of Object.entries(r.metrics)) lines.push(`${r.value},${r.arm},${metric},${s.median},${s.q1},${s.q3},${s.n}`);
  return `${lines.join('\n')}\n`;
}

/**
 * The latency figures of a run's summary in vLLM-bench vocabulary: E2EL always, TTFT, TPOT and ITL
 * when it was streamed; each as mean, p50, p90 and p99 (the core's LatencyStats). Pure.
 */
import type { LatencyStats, RunSummary } from '../../src/core/run/summary.ts';

export const LATENCY_STATS: ReadonlyArray<[label: string, key: keyof LatencyStats]> = [
  ['mean', 'meanMs'],
  ['p50', 'medianMs'],
  ['p90', 'p90Ms'],
  ['p99', 'p99Ms'],
];

/**
 * What each figure means, as its tooltip says it everywhere it shows: the latency metrics as vLLM's
 * benchmark (benchmark_serving.py, `vllm bench serve`) defines them, and the run's other figures.
 */
/** Counted from the servers' usage, never from the client's deltas: a request cut short reports none. */
const OUTPUT_TOKENS = "Output tokens per second of wall time (vLLM bench's output token throughput), from the servers' own usage counts. A request cut short (cancelled) reports none: a cancelled run counts what its finished requests reported, and shows — when none finished.";

export const METRIC_HELP: Readonly<Record<string, string>> = {
  E2EL: "End-to-end latency: from sending a prompt's request to the last byte of its answer, as the client sees it (vLLM bench's E2EL). Per successful prompt.",
  TTFT: "Time to first token: from sending a prompt's request to the first streamed chunk of its answer (vLLM bench's TTFT). Streamed runs only.",
  TPOT: "Time per output token, after the first: (E2EL − TTFT) / (output tokens − 1), for each answer longer than one token (vLLM bench's TPOT). Streamed runs only.",
  ITL: 'Inter-token latency: the gaps between successive streamed deltas of an answer, over all answers (vLLM bench\'s ITL). Deltas read together (a client behind its server) share the gap since the read before; a delta may carry several tokens (the server\'s --stream-interval): then a gap spans them.',
  mean: 'The mean over the prompts (or gaps).',
  p50: 'The median: half took at most this long.',
  p90: '90 % took at most this long.',
  p99: '99 % took at most this long.',
  'wall time': 'From the run\'s first request to its last answer.',
  'HTTP requests': 'Every HTTP request the run sent, of any path (generation, model and template lookups); by path on hover.',
  'generation requests': 'Requests that generate: /v1/completions, /v1/chat/completions and the batch chat endpoint.',
  'prompts/s': 'Prompts answered per second of wall time.',
  'output tok/s': OUTPUT_TOKENS,
  'output tokens/s': OUTPUT_TOKENS,
  Latency: "This prompt's E2EL: from sending its request to the last byte of its answer.",
  Tokens: 'Output tokens of this answer, as the server counted them.',
};

type Metric = 'e2el' | 'ttft' | 'tpot' | 'itl';
const METRICS: ReadonlyArray<[label: string, key: Metric]> = [
  ['E2EL', 'e2el'],
  ['TTFT', 'ttft'],
  ['TPOT', 'tpot'],
  ['ITL', 'itl'],
];

/** The tooltip of a figure's label (`TTFT p90`: both words explained); '' when none. */
export function metricHelp(label: string): string {
  return label
    .split(/\s+/)
    .map((w) => METRIC_HELP[w] ?? METRIC_HELP[label] ?? '')
    .filter((t, i, all) => t && all.indexOf(t) === i)
    .join(' ');
}

/** Why a streamed run has no value for a latency metric (its cell shows —). */
const NONE_BECAUSE: Readonly<Record<Metric, string>> = {
  e2el: 'No prompt was answered.',
  ttft: 'No prompt was answered, or the run was not streamed.',
  tpot: 'No answer was longer than one token.',
  itl: 'No inter-token gap was measured: every answer came whole in the read of its first token (one-token answers, or a server that sends a whole answer at once).',
};

/** The tooltip of a metric's cell with no value: why it has none. */
export function noneBecause(label: string): string {
  const key = METRICS.find(([l]) => l === label)?.[1];
  return key ? NONE_BECAUSE[key] : '';
}

/** Requests by path, one a line, for the tooltip of an HTTP request count. */
export function requestsByPathText(byPath: Readonly<Record<string, number>>): string {
  return Object.entries(byPath)
    .sort((a, b) => b[1] - a[1])
    .map(([path, n]) => `${n.toLocaleString('en-US')} × ${path}`)
    .join('\n');
}

/** The metrics a summary has: E2EL, and the streamed ones when any of `summaries` was streamed. */
export function latencyMetrics(...summaries: RunSummary[]): Array<{ label: string; pick: (s: RunSummary) => LatencyStats | null }> {
  const streamed = summaries.some((s) => s.streamed);
  return METRICS.filter(([, key]) => streamed || key === 'e2el').map(([label, key]) => ({ label, pick: (s) => s[key] ?? null }));
}

/** One figure per metric and statistic (`TTFT p90`…), for tables that list figures row by row. */
export function latencyFigures(...summaries: RunSummary[]): Array<{ label: string; pick: (s: RunSummary) => number | null }> {
  return latencyMetrics(...summaries).flatMap((m) => LATENCY_STATS.map(([stat, key]) => ({ label: `${m.label} ${stat}`, pick: (s: RunSummary) => m.pick(s)?.[key] ?? null })));
}

import type { Usage } from './request-shapes.ts';
import type { PromptResult } from './result.ts';

/** What a run counted on the way: HTTP requests and token usage per endpoint id, the model used. */
export interface Tally {
  requests: Map<string, number>;
  usage: Map<string, Usage>;
  model: string | null;
}

export interface LatencyStats {
  meanMs: number;
  medianMs: number;
  p99Ms: number;
}

export interface EndpointSummary {
  endpoint: string;
  prompts: number;
  ok: number;
  failed: number;
  requests: number;
}

/** A run's figures in vLLM-bench vocabulary (benchmark_serving.py). */
export interface RunSummary {
  pattern: string;
  mode: 'batched' | 'individual';
  model: string | null;
  wallMs: number;
  httpRequests: number;
  prompts: number;
  ok: number;
  failed: number;
  cancelled: number;
  /** HTTP requests per second of wall time. */
  requestThroughput: number;
  /** Successful prompts per second of wall time. */
  promptThroughput: number;
  /** From the servers' `usage`; null when no server reported it. */
  promptTokens: number | null;
  completionTokens: number | null;
  outputTokenThroughput: number | null;
  /** End-to-end latency of each successful prompt: its request's send to done. */
  e2el: LatencyStats | null;
  endpoints: EndpointSummary[];
}

export function summarize(results: readonly PromptResult[], tally: Tally, wallMs: number, meta: { pattern: string; batch: boolean }): RunSummary {
  const perEndpoint = new Map<string, EndpointSummary>();
  const entry = (id: string) => {
    let e = perEndpoint.get(id);
    if (!e) perEndpoint.set(id, (e = { endpoint: id, prompts: 0, ok: 0, failed: 0, requests: tally.requests.get(id) ?? 0 }));
    return e;
  };
  for (const id of tally.requests.keys()) entry(id);
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  for (const r of results) {
    if (r.status === 'ok') ok++;
    if (r.status === 'failed') failed++;
    if (r.endpoint) {
      const e = entry(r.endpoint);
      e.prompts++;
      if (r.status === 'ok') e.ok++;
      if (r.status === 'failed') e.failed++;
    }
    if (r.status === 'ok' && r.timings.sentMs !== null) latencies.push(r.timings.doneMs - r.timings.sentMs);
  }
  const usage = [...tally.usage.values()];
  const promptTokens = usage.length ? usage.reduce((s, u) => s + u.promptTokens, 0) : null;
  const completionTokens = usage.length ? usage.reduce((s, u) => s + u.completionTokens, 0) : null;
  const httpRequests = [...tally.requests.values()].reduce((s, n) => s + n, 0);
  const seconds = Math.max(wallMs, 1e-3) / 1000;
  return {
    pattern: meta.pattern,
    mode: meta.batch ? 'batched' : 'individual',
    model: tally.model,
    wallMs,
    httpRequests,
    prompts: results.length,
    ok,
    failed,
    cancelled: results.length - ok - failed,
    requestThroughput: httpRequests / seconds,
    promptThroughput: ok / seconds,
    promptTokens,
    completionTokens,
    outputTokenThroughput: completionTokens === null ? null : completionTokens / seconds,
    e2el: latencyStats(latencies),
    endpoints: [...perEndpoint.values()].sort((a, b) => a.endpoint.localeCompare(b.endpoint, undefined, { numeric: true })),
  };
}

export function latencyStats(values: number[]): LatencyStats | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / sorted.length;
  return { meanMs: mean, medianMs: percentile(sorted, 50), p99Ms: percentile(sorted, 99) };
}

/** Linear interpolation between closest ranks, as numpy.percentile (which vLLM bench uses). */
export function percentile(sorted: readonly number[], p: number): number {
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 3 : 1)} s`;
const ms = (v: number) => `${v < 10 ? v.toFixed(1) : int(v)} ms`;
const rate = (n: number | null, unit: string) => (n === null ? 'n/a' : `${n < 10 ? n.toFixed(2) : int(n)} ${unit}/s`);

/** The rows of a summary, label → value, in vLLM-bench vocabulary (terminal, notification, markdown). */
export function summaryRows(s: RunSummary): Array<[string, string]> {
  return [
    ['prompts', `${int(s.ok)} ok · ${int(s.failed)} failed · ${int(s.cancelled)} cancelled`],
    ['wall time', secs(s.wallMs)],
    ['HTTP requests', int(s.httpRequests)],
    ['request throughput', rate(s.requestThroughput, 'req')],
    ['prompt throughput', rate(s.promptThroughput, 'prompts')],
    ['output tokens', s.completionTokens === null ? 'n/a (no usage reported)' : int(s.completionTokens)],
    ['output token throughput', rate(s.outputTokenThroughput, 'tok')],
    ['E2EL mean', s.e2el ? ms(s.e2el.meanMs) : 'n/a'],
    ['E2EL median', s.e2el ? ms(s.e2el.medianMs) : 'n/a'],
    ['E2EL p99', s.e2el ? ms(s.e2el.p99Ms) : 'n/a'],
  ];
}


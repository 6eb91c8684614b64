import type { LogHistogram } from './histogram.ts';
import { percentile } from './stats.ts';
import type { Usage } from '../requests/request-shapes.ts';
import type { PromptResult } from './result.ts';
import { naturalOrder } from '../endpoints/natural-order.ts';
import { requestKind } from '../http/request-meter.ts';
import { meetsSlo, sloText, type Goodput, type Slo } from './goodput.ts';
import { promptLatencies } from './prompt-latencies.ts';

export { promptLatencies };

/** What a run counted on the way: HTTP requests per endpoint id and per path, token usage per endpoint id, the model used. */
export interface Tally {
  requests: Map<string, number>;
  paths: Map<string, number>;
  usage: Map<string, Usage>;
  model: string | null;
  /** Streamed runs: every inter-token gap, ms. */
  gaps?: LogHistogram;
}

export interface LatencyStats {
  meanMs: number;
  medianMs: number;
  p90Ms: number;
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
  /** Answers were streamed, so TTFT, TPOT and ITL were measured. */
  streamed: boolean;
  model: string | null;
  wallMs: number;
  /** Every HTTP request the run sent, of any path (generation, its preparation, load scrapes). */
  httpRequests: number;
  /** Those to a generation endpoint (completions, chat, batch chat, embeddings). */
  generationRequests: number;
  /** Requests by path (`/v1/completions`, `/tokenize`, `/v1/models`, …). */
  requestsByPath: Record<string, number>;
  prompts: number;
  ok: number;
  failed: number;
  cancelled: number;
  /** Generation requests per second of wall time. */
  requestThroughput: number;
  /** Successful prompts per second of wall time. */
  promptThroughput: number;
  /** From the servers' `usage`; null when no server reported it. */
  promptTokens: number | null;
  completionTokens: number | null;
  /** Successful prompts whose own token counts the servers did not tell (their TPOT is then unknown). */
  uncounted: number;
  outputTokenThroughput: number | null;
  /** End-to-end latency of each successful prompt: its request's send to its answer. */
  e2el: LatencyStats | null;
  /** Streamed only: time to first token, time per output token after the first, inter-token latency. */
  ttft: LatencyStats | null;
  tpot: LatencyStats | null;
  itl: LatencyStats | null;
  endpoints: EndpointSummary[];
  /** Runs given SLOs: the requests meeting all of them, per second of wall time (vLLM bench's goodput). */
  goodput?: Goodput;
}

/**
 * Builds a run's summary one result at a time, so a million results need not be kept: per prompt
 * only its latencies stay (a few numbers), inter-token gaps go to a histogram.
 */
export class SummaryBuilder {
  private readonly perEndpoint = new Map<string, EndpointSummary>();
  private readonly e2el: number[] = [];
  private readonly ttft: number[] = [];
  private readonly tpot: number[] = [];
  private ok = 0;
  private failed = 0;
  private prompts = 0;
  private uncounted = 0;
  private good = 0;

  constructor(private readonly meta: { pattern: string; batch: boolean; stream?: boolean; slo?: Slo }) {}

  add(r: PromptResult): void {
    this.prompts++;
    if (r.status === 'ok') this.ok++;
    if (r.status === 'failed') this.failed++;
    if (r.endpoint) {
      const e = this.entry(r.endpoint);
      e.prompts++;
      if (r.status === 'ok') e.ok++;
      if (r.status === 'failed') e.failed++;
    }
    if (r.status !== 'ok') return;
    if (this.meta.slo && meetsSlo(r, this.meta.slo)) this.good++;
    if (r.completionTokens === null) this.uncounted++;
    const l = promptLatencies(r);
    if (l.e2el !== null) this.e2el.push(l.e2el);
    if (l.ttft !== null) this.ttft.push(l.ttft);
    if (l.tpot !== null) this.tpot.push(l.tpot);
  }

  finish(tally: Tally, wallMs: number): RunSummary {
    for (const id of tally.requests.keys()) this.entry(id);
    for (const e of this.perEndpoint.values()) e.requests = tally.requests.get(e.endpoint) ?? 0;
    const usage = [...tally.usage.values()];
    const promptTokens = usage.length ? usage.reduce((s, u) => s + u.promptTokens, 0) : null;
    const completionTokens = usage.length ? usage.reduce((s, u) => s + u.completionTokens, 0) : null;
    let httpRequests = 0;
    let generationRequests = 0;
    for (const [path, n] of tally.paths) {
      httpRequests += n;
      if (requestKind(path) === 'generation') generationRequests += n;
    }
    const seconds = Math.max(wallMs, 1e-3) / 1000;
    return {
      pattern: this.meta.pattern,
      mode: this.meta.batch ? 'batched' : 'individual',
      streamed: Boolean(this.meta.stream),
      model: tally.model,
      wallMs,
      httpRequests,
      generationRequests,
      requestsByPath: Object.fromEntries([...tally.paths].sort((a, b) => b[1] - a[1])),
      prompts: this.prompts,
      ok: this.ok,
      failed: this.failed,
      cancelled: this.prompts - this.ok - this.failed,
      requestThroughput: generationRequests / seconds,
      promptThroughput: this.ok / seconds,
      promptTokens,
      completionTokens,
      uncounted: this.uncounted,
      outputTokenThroughput: completionTokens === null ? null : completionTokens / seconds,
      e2el: latencyStats(this.e2el),
      ttft: latencyStats(this.ttft),
      tpot: latencyStats(this.tpot),
      itl: histogramStats(tally.gaps),
      endpoints: [...this.perEndpoint.values()].sort((a, b) => naturalOrder(a.endpoint, b.endpoint)),
      ...(this.meta.slo ? { goodput: { slo: this.meta.slo, good: this.good, perSecond: this.good / seconds } } : {}),
    };
  }

  private entry(id: string): EndpointSummary {
    let e = this.perEndpoint.get(id);
    if (!e) this.perEndpoint.set(id, (e = { endpoint: id, prompts: 0, ok: 0, failed: 0, requests: 0 }));
    return e;
  }
}


/** A summary of results already in hand. */
export function summarize(results: readonly PromptResult[], tally: Tally, wallMs: number, meta: { pattern: string; batch: boolean; stream?: boolean; slo?: Slo }): RunSummary {
  const builder = new SummaryBuilder(meta);
  for (const r of results) builder.add(r);
  return builder.finish(tally, wallMs);
}

export function latencyStats(values: readonly number[]): LatencyStats | null {
  if (!values.length) return null;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return { meanMs: sum / sorted.length, medianMs: percentile(sorted, 50), p90Ms: percentile(sorted, 90), p99Ms: percentile(sorted, 99) };
}

function histogramStats(h: LogHistogram | undefined): LatencyStats | null {
  if (!h?.count) return null;
  return { meanMs: h.mean, medianMs: h.quantile(0.5), p90Ms: h.quantile(0.9), p99Ms: h.quantile(0.99) };
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
    ['HTTP requests', requestsLine(s)],
    ['request throughput', rate(s.requestThroughput, 'req')],
    ['prompt throughput', rate(s.promptThroughput, 'prompts')],
    ['output tokens', s.completionTokens === null ? 'n/a (no usage reported)' : int(s.completionTokens) + (s.uncounted ? ` (${int(s.uncounted)} answers without their own count)` : '')],
    ['output token throughput', rate(s.outputTokenThroughput, 'tok')],
    ...(s.goodput ? [['goodput', `${rate(s.goodput.perSecond, 'req')} (${int(s.goodput.good)} of ${int(s.ok)} ok requests within ${sloText(s.goodput.slo)})`] as [string, string]] : []),
    ...latencyRows('E2EL', s.e2el),
    ...(s.streamed ? [...latencyRows('TTFT', s.ttft), ...latencyRows('TPOT', s.tpot), ...latencyRows('ITL', s.itl)] : []),
  ];
}

/** Every request the run sent, and by path: `1,012 (/tokenize 1,004 · /v1/models 4 · /v1/completions 4)`. */
export function requestsLine(s: RunSummary): string {
  const paths = Object.entries(s.requestsByPath);
  if (paths.length <= 1) return int(s.httpRequests);
  return `${int(s.httpRequests)} (${paths.map(([path, n]) => `${path} ${int(n)}`).join(' · ')})`;
}

function latencyRows(label: string, l: LatencyStats | null): Array<[string, string]> {
  const row = (name: string, v: number | undefined): [string, string] => [`${label} ${name}`, v === undefined ? 'n/a' : ms(v)];
  return [row('mean', l?.meanMs), row('median', l?.medianMs), row('p90', l?.p90Ms), row('p99', l?.p99Ms)];
}


import { Histogram, numberText } from './histogram.ts';
import type { SimOptions } from './options.ts';
import { outputTokens, type FinishReason, type Output } from './replies.ts';

/** What vLLM's latency histograms observe of one finished sequence, in milliseconds. */
export interface SequenceTimes {
  /** Arrival (submission) to its slot. */
  queueMs: number;
  /** Arrival to first token. */
  ttftMs: number;
  /** Arrival to finish. */
  e2eMs: number;
  /** Gaps between its tokens: `tokens - 1` of `tpotMs`. */
  tokens: number;
  tpotMs: number;
}

/** Live gauges the engine reports at scrape time. */
export interface EngineGauges {
  running: number;
  waiting: number;
  capacity: number;
  /** 0..1; without it, running ÷ capacity (an engine with no modeled KV cache). */
  kvCacheUsage?: number;
  /** Output tokens its running sequences generated so far (vLLM counts them every step, not at the end). */
  generating?: number;
}

/** What the vLLM scheduler model counts, per engine (summed over a server's engines). */
export interface SchedulerCounters {
  preemptions: number;
  /** Prompt tokens looked up in the prefix cache, and those found (vLLM counts tokens, not requests). */
  prefixQueries: number;
  prefixHits: number;
  /** Engine steps and their modeled duration. */
  steps: number;
  modeledMs: number;
  /** KV-cache blocks of the engine and their size, as vLLM's cache_config_info states them. */
  blocks: number;
  blockSize: number;
}

// vLLM's instrumentator leaves these out of http_requests_total.
const UNINSTRUMENTED = new Set(['/metrics', '/health']);

// vLLM V1's bucket bounds, in seconds (vllm/v1/metrics/loggers.py).
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];
const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
const REQUEST_LATENCY_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0];

type Labels = Record<string, string>;

/** Counters of one server, exposed both as SimStats and as vLLM-style Prometheus text. */
export class Metrics {
  promptsReceived = 0;
  promptTokens = 0;
  private generationTokens = 0;
  private readonly finished: Record<FinishReason, number> = { stop: 0, length: 0 };
  private readonly ttft = new Histogram(TTFT_BUCKETS);
  private readonly itl = new Histogram(ITL_BUCKETS);
  private readonly e2e = new Histogram(REQUEST_LATENCY_BUCKETS);
  private readonly queue = new Histogram(REQUEST_LATENCY_BUCKETS);
  /** Keyed `${method} ${path} ${status}`. */
  private readonly http = new Map<string, number>();

  constructor(
    private readonly model: string,
    private readonly knownPaths: ReadonlySet<string>,
  ) {}

  recordHttp(method: string, path: string, status: number): void {
    const key = `${method} ${path} ${status}`;
    this.http.set(key, (this.http.get(key) ?? 0) + 1);
  }

  sequenceFinished(output: Output): void {
    this.generated(outputTokens(output), output.finishReason);
  }

  /** One finished sequence's output tokens and why it ended. */
  generated(tokens: number, reason: FinishReason): void {
    this.generationTokens += tokens;
    this.finished[reason]++;
  }

  /** One finished sequence (vLLM: one engine request) into the latency histograms. */
  sequenceTimed(t: SequenceTimes): void {
    this.ttft.observe(t.ttftMs / 1000);
    this.e2e.observe(t.e2eMs / 1000);
    this.queue.observe(t.queueMs / 1000);
    this.itl.observe(t.tpotMs / 1000, t.tokens - 1);
  }

  httpRequests(): Record<string, number> {
    return Object.fromEntries(this.http);
  }

  /** Gauges once per data-parallel engine (label `engine`); counters and histograms for the server, on engine 0. */
  render(engines: readonly EngineGauges[], cacheMetric: SimOptions['cacheMetric'], tokenLatency: SimOptions['tokenLatencyMetric'], scheduler: readonly SchedulerCounters[] = []): string {
    const model = { engine: '0', model_name: this.model };
    const lines: string[] = [];
    const family = (name: string, type: 'gauge' | 'counter', help: string, samples: Array<[Labels, number]>): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labelText(labels)} ${numberText(value)}`);
    };
    const perEngine = (value: (g: EngineGauges) => number): Array<[Labels, number]> =>
      engines.map((g, i) => [{ engine: String(i), model_name: this.model }, value(g)]);
    // The model's labels written once: a swarm of 1,000 simulated servers is scraped every few seconds, and buckets are most lines.
    const modelLabels = labelText(model);
    const bucketPrefix = modelLabels.slice(0, -1);
    const histogram = (name: string, help: string, h: Histogram): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
      const { buckets, sum, count } = h.samples();
      for (const [le, n] of buckets) lines.push(`${name}_bucket${bucketPrefix},le="${le}"} ${numberText(n)}`);
      lines.push(`${name}_count${modelLabels} ${numberText(count)}`, `${name}_sum${modelLabels} ${numberText(sum)}`);
    };
    family('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', perEngine((g) => g.running));
    family('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', perEngine((g) => g.waiting));
    const usage = perEngine((g) => g.kvCacheUsage ?? g.running / g.capacity);
    // Renamed in PR #18354: both names until 0.10.x (the old one deprecated), only kv_ from 0.11.
    if (cacheMetric !== 'kv') family('vllm:gpu_cache_usage_perc', 'gauge', 'GPU KV-cache usage. 1 means 100 percent usage.', usage);
    if (cacheMetric !== 'gpu') family('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', usage);
    const total = (f: (c: SchedulerCounters) => number): number => scheduler.reduce((sum, c) => sum + f(c), 0);
    // Without the vLLM scheduler model there is no KV-cache pressure, so nothing is ever preempted.
    family('vllm:num_preemptions_total', 'counter', 'Cumulative number of preemption from the engine.', [[model, total((c) => c.preemptions)]]);
    if (scheduler.length) {
      family('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', [[model, total((c) => c.prefixQueries)]]);
      family('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', [[model, total((c) => c.prefixHits)]]);
      const first = scheduler[0]!;
      family('vllm:cache_config_info', 'gauge', 'Information of the LLMEngine CacheConfig (modeled by the simulator).', [[{ ...model, block_size: String(first.blockSize), num_gpu_blocks: String(first.blocks) }, 1]]);
      // Not vLLM's: the simulator's own figures, so tests and the planner can read modeled time without a clock.
      family('swarm_sim:engine_steps_total', 'counter', 'Engine steps the simulator modeled.', [[model, total((c) => c.steps)]]);
      family('swarm_sim:modeled_busy_seconds_total', 'counter', 'Modeled time the engines spent in steps (not wall time).', [[model, total((c) => c.modeledMs) / 1000]]);
    }
    family('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', [[model, this.promptTokens]]);
    const generating = engines.reduce((sum, g) => sum + (g.generating ?? 0), 0);
    family('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', [[model, this.generationTokens + generating]]);
    family(
      'vllm:request_success_total',
      'counter',
      'Count of successfully processed requests.',
      Object.entries(this.finished).map(([reason, count]) => [{ ...model, finished_reason: reason }, count]),
    );
    histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', this.ttft);
    // Added by PR #24110 (0.11) beside the old name, which PR #32661 removed (0.15).
    if (tokenLatency !== 'itl') histogram('vllm:time_per_output_token_seconds', 'Histogram of time per output token in seconds.', this.itl);
    if (tokenLatency !== 'tpot') histogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', this.itl);
    histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', this.e2e);
    histogram('vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', this.queue);
    family('http_requests_total', 'counter', 'Total number of requests by method, status and handler.', [...this.instrumented().values()]);
    return lines.join('\n') + '\n';
  }

  /** http_requests_total as prometheus-fastapi-instrumentator groups it: status class, unmatched paths as handler "none". */
  private instrumented(): Map<string, [Record<string, string>, number]> {
    const samples = new Map<string, [Record<string, string>, number]>();
    for (const [key, count] of this.http) {
      const [method, path, status] = key.split(' ') as [string, string, string];
      if (UNINSTRUMENTED.has(path)) continue;
      const labels = { handler: this.knownPaths.has(path) ? path : 'none', method, status: `${status[0]}xx` };
      const id = labelText(labels);
      samples.set(id, [labels, (samples.get(id)?.[1] ?? 0) + count]);
    }
    return samples;
  }
}

function labelText(labels: Record<string, string>): string {
  const escape = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
  return `{${Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`).join(',')}}`;
}

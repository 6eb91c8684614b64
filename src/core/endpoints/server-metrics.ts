import pLimit from 'p-limit';
import { Abort, type RequestSignal } from '../http/abort.ts';
import type { Meter } from '../http/request-meter.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import { parsePrometheusText } from './prometheus-text.ts';
import { percentile } from '../run/stats.ts';

/** What one vLLM server's `/metrics` says: gauges now, counters since it started. */
export interface VllmMetrics {
  running: number;
  waiting: number;
  /** 0..1; null when the server exposes neither metric name. */
  kvCacheUsage: number | null;
  /** Engine requests finished (`vllm:request_success_total`, every finish reason): one per prompt of a list. */
  finished: number;
  generationTokens: number;
  promptTokens: number;
  /** Sequences preempted (their KV blocks taken back, recomputed later). */
  preemptions: number;
  /** Prompt tokens looked up in the prefix cache, and those found there (vLLM V1's counters). */
  prefixCacheQueries: number;
  prefixCacheHits: number;
}

/** The metrics read; every other sample is passed over at its name. */
const READ = new Set(['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'vllm:request_success_total', 'vllm:generation_tokens_total', 'vllm:prompt_tokens_total', 'vllm:num_preemptions_total', 'vllm:prefix_cache_queries_total', 'vllm:prefix_cache_hits_total']);
const wanted = (name: string) => READ.has(name);

/** A `/metrics` body no bigger than this is read; a bigger one is not a vLLM server's. */
const MAX_METRICS_BYTES = 4 * 1024 * 1024;

/**
 * vLLM's metrics out of Prometheus text. With data parallelism each gauge comes once per `engine`
 * label: request counts add up, the KV-cache usage (a fraction) is the fullest engine's, never a
 * sum. It is `vllm:kv_cache_usage_perc`, falling back to the older `vllm:gpu_cache_usage_perc`
 * (notes §2.6, §7.8). Null when the text has neither request gauge (not a vLLM server).
 */
export function readVllmMetrics(text: string): VllmMetrics | null {
  const sums = new Map<string, number>();
  const maxima = new Map<string, number>();
  for (const { name, value } of parsePrometheusText(text, wanted)) {
    if (Number.isNaN(value)) continue;
    sums.set(name, (sums.get(name) ?? 0) + value);
    maxima.set(name, Math.max(maxima.get(name) ?? -Infinity, value));
  }
  if (!sums.has('vllm:num_requests_running') && !sums.has('vllm:num_requests_waiting')) return null;
  return {
    running: sums.get('vllm:num_requests_running') ?? 0,
    waiting: sums.get('vllm:num_requests_waiting') ?? 0,
    kvCacheUsage: maxima.get('vllm:kv_cache_usage_perc') ?? maxima.get('vllm:gpu_cache_usage_perc') ?? null,
    finished: sums.get('vllm:request_success_total') ?? 0,
    generationTokens: sums.get('vllm:generation_tokens_total') ?? 0,
    promptTokens: sums.get('vllm:prompt_tokens_total') ?? 0,
    preemptions: sums.get('vllm:num_preemptions_total') ?? 0,
    prefixCacheQueries: sums.get('vllm:prefix_cache_queries_total') ?? 0,
    prefixCacheHits: sums.get('vllm:prefix_cache_hits_total') ?? 0,
  };
}

/** A gauge over the servers that answered: its middle and its 90th percentile, so 1,000 servers read as a band, not 1,000 lines. */
export interface Band {
  median: number;
  p90: number;
  max: number;
}

function band(values: number[]): Band | null {
  if (!values.length) return null;
  const sorted = Float64Array.from(values).sort();
  return { median: percentile(sorted, 50), p90: percentile(sorted, 90), max: sorted[sorted.length - 1]! };
}

/** `GET /metrics` of one endpoint over its own route; null when it has none (not vLLM) or cannot be reached. */
export async function scrapeVllmMetrics(pool: SwarmPool, slot: number, timeoutMs: number, signal?: RequestSignal, meter?: Meter): Promise<VllmMetrics | null> {
  try {
    const res = await pool.get(slot, '/metrics', timeoutMs, signal, { meter, maxBytes: MAX_METRICS_BYTES });
    return res.status === 200 ? readVllmMetrics(res.body) : null;
  } catch {
    return null;
  }
}

/** A swarm's servers at one reading, summed over those that answered. */
export interface ServerLoad {
  /** Servers that answered with vLLM metrics, of those asked (the sample read: at most `sample` of the swarm's). */
  answered: number;
  asked: number;
  /** Endpoints in the swarm; more than `asked` when a sample of them is read. */
  endpoints: number;
  /**
   * Sequences in model execution batches, and queued, now. Like the counters below, a sum over the
   * servers that answered, scaled by endpoints ÷ asked when a sample was read: an estimate for the swarm.
   */
  running: number;
  waiting: number;
  /** Counters' growth since the first reading (one interval after the watch began): engine requests finished (one per prompt of a list), tokens generated. */
  finished: number;
  generationTokens: number;
  /** The same for preemptions and the prefix cache's queried and hit tokens. */
  preemptions: number;
  prefixCacheQueries: number;
  prefixCacheHits: number;
  /** Per server: sequences running and waiting, and the KV cache's usage (0..1; null when no server says). */
  runningBand: Band | null;
  waitingBand: Band | null;
  kvCacheUsage: Band | null;
  /** Milliseconds since the watch began, at the middle of the reading (reading 1,000 busy servers takes seconds). */
  atMs: number;
}

export interface ServerLoadOptions {
  /**
   * Between the start of one reading and the next, at least; a reading that took `d` is followed by
   * a pause of at least `d`, so reading a busy swarm takes at most half the time. (A reading is at most
   * `sample` scrapes: its length is the servers' and the client's latency, not its own cost, so a
   * longer pause would only leave a busy run's chart emptier: 1,000 busy servers were read every 8 s
   * with a pause of 3 × `d`.)
   */
  intervalMs?: number;
  /** Scrapes in flight at once, across the swarm. */
  concurrency?: number;
  /** One scrape's deadline (a hung server answers nothing this reading). */
  timeoutMs?: number;
  /**
   * At most this many endpoints are read, the same ones every reading (picked at random once, so a
   * swarm's order, e.g. round-robin, does not line up with the pick): a reading of 1,000 servers costs
   * what one of `sample` does, and readings come at the interval all run long.
   */
  sample?: number;
}

export interface ServerLoadWatch {
  /** The latest reading, null before the first. */
  readonly latest: ServerLoad | null;
  stop(): void;
}

/** The counters a reading reports as growth since the watch's first reading. */
const COUNTERS = ['finished', 'generationTokens', 'preemptions', 'prefixCacheQueries', 'prefixCacheHits'] as const;
type Counters = Record<(typeof COUNTERS)[number], number>;

const DEFAULTS: Required<ServerLoadOptions> = { intervalMs: 2_000, concurrency: 32, timeoutMs: 2_000, sample: 128 };
/** After a reading that took d, the next waits at least this × d. */
const PAUSE_PER_READ = 1;

/**
 * Reads the endpoints' `/metrics` (a sample of `sample` of them in a bigger swarm) after `intervalMs` and every
 * `intervalMs` after that until stopped, and hands on the swarm's sum each time: what the servers have in flight and how far their counters moved, for a
 * view of a run whose answers come back only at its end (an unstreamed batch). It never holds the
 * run: scrapes go at most `concurrency` at a time, each with its own deadline, the next reading
 * starts only after this one ended (and a pause as long as it took), and a server that does
 * not answer is left out of that reading. The counters' growth is per server from its first reading
 * (a server restarted meanwhile starts again from 0).
 * Its requests are not a run's: no meter counts them, as none would if nobody watched.
 */
export function watchServerLoad(pool: SwarmPool, onLoad: (load: ServerLoad) => void, options: ServerLoadOptions = {}): ServerLoadWatch {
  const { intervalMs, concurrency, timeoutMs, sample } = { ...DEFAULTS, ...options };
  const all = pool.endpoints.map((e) => e.slot);
  const slots = pick(all, sample);
  const scale = all.length / Math.max(1, slots.length);
  const baseline = new Map<number, VllmMetrics>();
  // Every scrape in flight listens to it (an Abort has no listener limit to warn at).
  const stopped = new Abort();
  const limit = pLimit(concurrency);
  const startedAt = performance.now();
  let latest: ServerLoad | null = null;

  /** A server's counters since its first reading; a counter that went down says it restarted (counting from 0 again). */
  const since = (slot: number, m: VllmMetrics): Counters => {
    let base = baseline.get(slot);
    if (!base) baseline.set(slot, (base = m));
    if (COUNTERS.some((k) => m[k] < base![k])) baseline.set(slot, (base = { ...m, ...Object.fromEntries(COUNTERS.map((k) => [k, 0])) }));
    return Object.fromEntries(COUNTERS.map((k) => [k, m[k] - base![k]])) as Counters;
  };

  let timer: NodeJS.Timeout | undefined;
  const read = async (): Promise<void> => {
    const began = performance.now();
    const readings = await Promise.all(slots.map((slot) => limit(async () => [slot, stopped.aborted ? null : await scrapeVllmMetrics(pool, slot, timeoutMs, stopped)] as const)));
    if (stopped.aborted) return;
    const load: ServerLoad = { answered: 0, asked: slots.length, endpoints: all.length, running: 0, waiting: 0, finished: 0, generationTokens: 0, preemptions: 0, prefixCacheQueries: 0, prefixCacheHits: 0, runningBand: null, waitingBand: null, kvCacheUsage: null, atMs: (began + performance.now()) / 2 - startedAt };
    const running: number[] = [];
    const waiting: number[] = [];
    const usage: number[] = [];
    for (const [slot, m] of readings) {
      if (!m) continue;
      load.answered++;
      load.running += m.running;
      load.waiting += m.waiting;
      running.push(m.running);
      waiting.push(m.waiting);
      if (m.kvCacheUsage !== null) usage.push(m.kvCacheUsage);
      const moved = since(slot, m);
      for (const k of COUNTERS) load[k] += moved[k];
    }
    if (scale !== 1) for (const k of ['running', 'waiting', ...COUNTERS] as const) load[k] *= scale;
    load.runningBand = band(running);
    load.waitingBand = band(waiting);
    load.kvCacheUsage = band(usage);
    latest = load;
    onLoad(load);
    const took = performance.now() - began;
    timer = setTimeout(() => void read(), Math.max(intervalMs - took, PAUSE_PER_READ * took));
    timer.unref?.();
  };

  // The first reading after one interval: a short run is never read at all, and a long one is not read while it starts.
  timer = setTimeout(() => void read(), intervalMs);
  timer.unref?.();
  return {
    get latest() {
      return latest;
    },
    stop() {
      clearTimeout(timer);
      stopped.abort(new Error('the watch stopped'));
      limit.clearQueue();
    },
  };
}

/** A running run's readings so far, one JSON line each, beside its record (`swarm run`'s runs/NAME.live.jsonl, gone once runs/NAME.json is written). */
export const LIVE_READINGS = '.live.jsonl';

/** `k` of `slots` at random, in the swarm's order; all of them when there are no more than `k`. */
function pick(slots: readonly number[], k: number): number[] {
  if (slots.length <= k) return [...slots];
  const a = [...slots];
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(Math.random() * (a.length - i));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, k).sort((x, y) => x - y);
}

/**
 * A run's servers against time: every reading of the watch kept (one aggregated line per reading, so a
 * long run over 1,000 servers stays small), for the run's record, each also handed to `onLoad` as it
 * comes (a view that draws them while the run goes). `stop` ends the watch and hands them over.
 */
export function recordServerLoad(pool: SwarmPool, options: ServerLoadOptions = {}, onLoad?: (load: ServerLoad) => void): { stop(): ServerLoad[] } {
  const readings: ServerLoad[] = [];
  const watch = watchServerLoad(pool, (load) => (readings.push(load), onLoad?.(load)), options);
  return {
    stop() {
      watch.stop();
      return readings;
    },
  };
}

import type { Meter } from './http/request-meter.ts';
import type { SwarmPool } from './pool.ts';

/** What an endpoint is busy with, from vLLM's `/metrics`. */
export interface EndpointLoad {
  running: number;
  waiting: number;
  /** 0..1; null when the server exposes neither metric name. */
  kvCacheUsage: number | null;
}

/**
 * Reads vLLM's Prometheus gauges. With data parallelism each comes once per `engine` label: the
 * request counts add up, the KV-cache usage (a fraction) is the fullest engine's, never a sum. It is
 * `vllm:kv_cache_usage_perc`, falling back to the older `vllm:gpu_cache_usage_perc` (notes §2.6, §7.8).
 */
export function parseVllmMetrics(text: string): EndpointLoad | null {
  const sums = new Map<string, number>();
  const maxima = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(vllm:[a-z_]+)(?:\{[^}]*\})?\s+([-+0-9.eE]+|NaN)\s*$/.exec(line);
    if (!m) continue;
    const value = Number(m[2]);
    sums.set(m[1]!, (sums.get(m[1]!) ?? 0) + value);
    maxima.set(m[1]!, Math.max(maxima.get(m[1]!) ?? -Infinity, value));
  }
  if (!sums.has('vllm:num_requests_running') && !sums.has('vllm:num_requests_waiting')) return null;
  return {
    running: sums.get('vllm:num_requests_running') ?? 0,
    waiting: sums.get('vllm:num_requests_waiting') ?? 0,
    kvCacheUsage: maxima.get('vllm:kv_cache_usage_perc') ?? maxima.get('vllm:gpu_cache_usage_perc') ?? null,
  };
}

/** `GET /metrics` of one endpoint; null when it has none (not vLLM) or cannot be reached. `meter`: the run that asked. */
export async function readLoad(pool: SwarmPool, slot: number, signal?: AbortSignal, meter?: Meter): Promise<EndpointLoad | null> {
  try {
    const res = await pool.client(slot).send('GET', '/metrics', undefined, pool.options.lookupTimeoutMs, signal, { meter });
    return res.status === 200 ? parseVllmMetrics(res.body) : null;
  } catch {
    return null;
  }
}

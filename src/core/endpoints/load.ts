import type { Meter } from '../http/request-meter.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import { readVllmMetrics, scrapeVllmMetrics, type VllmMetrics } from './server-metrics.ts';

/** What an endpoint is busy with, from vLLM's `/metrics` (load-aware routing, the tree's hovers). */
export type EndpointLoad = Pick<VllmMetrics, 'running' | 'waiting' | 'kvCacheUsage'>;

const loadOf = (m: VllmMetrics | null): EndpointLoad | null => m && { running: m.running, waiting: m.waiting, kvCacheUsage: m.kvCacheUsage };

/** The load gauges of a `/metrics` text (see readVllmMetrics); null when it is not a vLLM server's. */
export function parseVllmMetrics(text: string): EndpointLoad | null {
  return loadOf(readVllmMetrics(text));
}

/** `GET /metrics` of one endpoint; null when it has none (not vLLM) or cannot be reached. `meter`: the run that asked. */
export async function readLoad(pool: SwarmPool, slot: number, signal?: AbortSignal, meter?: Meter): Promise<EndpointLoad | null> {
  return loadOf(await scrapeVllmMetrics(pool, slot, pool.options.lookupTimeoutMs, signal, meter));
}

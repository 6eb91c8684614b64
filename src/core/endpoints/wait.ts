import { setTimeout as sleep } from 'node:timers/promises';
import { checkHealth, type EndpointHealthReport } from './health.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';

export interface WaitOptions {
  /** Between health rounds. */
  intervalMs: number;
  /** How long to keep waiting for the rest once the first endpoint is healthy (Aurora-Swarm's clock). */
  healthTimeoutMs: number;
  signal?: AbortSignal;
  /** After each round: how many are healthy so far. */
  onRound?: (healthy: number, total: number, reports: EndpointHealthReport[]) => void;
  /**
   * Before each round: the pool to ask now — a hostfile a job is still writing gives a bigger one —
   * and whether its endpoints are all there is. Until they are, the wait goes on.
   */
  refresh?: () => Promise<{ pool: SwarmPool; final: boolean }>;
}

export interface WaitOutcome {
  /** `host:port` of every endpoint that answered healthy at least once. */
  healthy: Set<string>;
  /** The last round's report of each endpoint. */
  reports: EndpointHealthReport[];
  /** An endpoint that refused our credentials (401, 403): the wait stopped there, as waiting cannot help. */
  denied: EndpointHealthReport | null;
}

/**
 * Aurora-Swarm's wait_for_vllm_servers: poll `/health` until every endpoint answers 200, or until
 * `healthTimeoutMs` after the first one did (servers come up over minutes; some never do).
 */
export async function waitForHealthy(pool: SwarmPool, options: WaitOptions): Promise<WaitOutcome> {
  const healthy = new Set<string>();
  let firstHealthyAt: number | undefined;
  let final = !options.refresh;
  for (;;) {
    if (options.refresh) ({ pool, final } = await options.refresh());
    const reports = await checkHealth(pool, options.signal);
    for (const r of reports) if (r.status === 'up') healthy.add(r.endpoint);
    const denied = reports.find((r) => r.denied !== null);
    if (denied && !options.signal?.aborted) return { healthy, reports, denied };
    if (healthy.size && firstHealthyAt === undefined) firstHealthyAt = Date.now();
    const up = reports.filter((r) => healthy.has(r.endpoint)).length;
    options.onRound?.(up, reports.length, reports);
    const expired = firstHealthyAt !== undefined && Date.now() - firstHealthyAt >= options.healthTimeoutMs;
    if ((final && up === reports.length) || expired || options.signal?.aborted) return { healthy, reports, denied: null };
    try {
      await sleep(options.intervalMs, undefined, options.signal ? { signal: options.signal } : {});
    } catch {
      return { healthy, reports, denied: null };
    }
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import { checkHealth, type EndpointHealthReport } from './health.ts';
import type { SwarmPool } from './pool.ts';

export interface WaitOptions {
  /** Between health rounds. */
  intervalMs: number;
  /** How long to keep waiting for the rest once the first endpoint is healthy (Aurora-Swarm's clock). */
  healthTimeoutMs: number;
  signal?: AbortSignal;
  /** After each round: how many are healthy so far. */
  onRound?: (healthy: number, total: number, reports: EndpointHealthReport[]) => void;
}

/**
 * Aurora-Swarm's wait_for_vllm_servers: poll `/health` until every endpoint answers 200, or until
 * `healthTimeoutMs` after the first one did (servers come up over minutes; some never do).
 * Returns the slots that answered healthy at least once, in hostfile order.
 */
export async function waitForHealthy(pool: SwarmPool, options: WaitOptions): Promise<number[]> {
  const healthy = new Set<number>();
  let firstHealthyAt: number | undefined;
  for (;;) {
    const reports = await checkHealth(pool, options.signal);
    reports.forEach((r, slot) => r.status === 'healthy' && healthy.add(slot));
    if (healthy.size && firstHealthyAt === undefined) firstHealthyAt = Date.now();
    options.onRound?.(healthy.size, reports.length, reports);
    const expired = firstHealthyAt !== undefined && Date.now() - firstHealthyAt >= options.healthTimeoutMs;
    if (healthy.size === reports.length || expired || options.signal?.aborted) break;
    try {
      await sleep(options.intervalMs, undefined, options.signal ? { signal: options.signal } : {});
    } catch {
      break;
    }
  }
  return [...healthy].sort((a, b) => a - b);
}

import { SwarmPool, type Endpoint, type PoolOptions, type RetryPolicy } from '../../src/core/index.ts';
import { startSimCluster, type SimCluster } from '../../src/sim/cluster.ts';
import type { SimOptions } from '../../src/sim/options.ts';

/** Retries fast enough for tests; the policy's shape is what is under test, not its seconds. */
export const FAST_RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, budgetMs: 5_000, refusedRetryDelayMs: 10 };

/** Simulator clusters and pools made by one test, all closed by `close()`. */
export class Fixture {
  private readonly closers: Array<() => Promise<void>> = [];

  async sim(count: number, options: Partial<SimOptions> = {}): Promise<SimCluster> {
    const cluster = await startSimCluster(count, { ttftMs: 0, tpotMs: 0, requestOverheadMs: 0, ...options });
    this.closers.push(() => cluster.close());
    return cluster;
  }

  pool(endpoints: Endpoint[], options: Partial<PoolOptions> = {}): SwarmPool {
    const pool = new SwarmPool(endpoints, { retry: FAST_RETRY, ...options });
    this.closers.push(() => pool.close());
    return pool;
  }

  async close(): Promise<void> {
    await Promise.all(this.closers.splice(0).map((c) => c()));
  }
}

export const prompts = (n: number, prefix = 'p') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

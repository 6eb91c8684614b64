import type { SwarmPool } from './swarm-pool.ts';
import type { RouteStrategy } from '../dispatch/routing.ts';

/**
 * Aurora-Swarm's sub-pool selectors. A sub-pool shares its parent's connections, concurrency limit
 * and endpoint health; its endpoints are indexed from 0; every pattern takes one wherever it takes a
 * pool. (Free functions: `SwarmPool.select` already names the per-run endpoint choice.)
 */

/** Endpoints whose tag `key` is exactly `value`. */
export function byTag(pool: SwarmPool, key: string, value: string): SwarmPool {
  return pool.narrow(pool.endpoints.filter((s) => s.endpoint.tags[key] === value).map((s) => s.slot));
}

/** `n` endpoints drawn at random without replacement (all of them when `n` ≥ the size). */
export function sample(pool: SwarmPool, n: number, random: () => number = Math.random): SwarmPool {
  const slots = pool.endpoints.map((s) => s.slot);
  const k = Math.max(0, Math.min(n, slots.length));
  // Partial Fisher–Yates: the first k places end up a uniform sample.
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(random() * (slots.length - i));
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  return pool.narrow(slots.slice(0, k));
}

/** The endpoints at these indices, in this order; an index out of range throws, as Python's list does. */
export function select(pool: SwarmPool, indices: readonly number[]): SwarmPool {
  const all = pool.endpoints;
  return pool.narrow(
    indices.map((i) => {
      const state = Number.isInteger(i) ? all.at(i) : undefined;
      if (!state) throw new RangeError(`endpoint index ${i} is out of range for a pool of ${all.length}`);
      return state.slot;
    }),
  );
}

/** Endpoints `start` … `end - 1`, with Python's slice semantics (negative counts from the end, out of range clamps). */
export function slice(pool: SwarmPool, start: number, end?: number): SwarmPool {
  return pool.narrow(pool.endpoints.slice(start, end).map((s) => s.slot));
}

/** The same endpoints routed by `route` instead of the pool's strategy (the panel picks one per run). */
export function routedBy(pool: SwarmPool, route: RouteStrategy): SwarmPool {
  const sub = Object.create(pool) as SwarmPool;
  Object.defineProperty(sub, 'options', { value: { ...pool.options, route }, enumerable: true });
  return sub;
}

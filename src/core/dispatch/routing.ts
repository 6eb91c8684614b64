import type { EndpointLoad } from '../endpoints/load.ts';
import type { RouteStrategy } from '../pool/options.ts';

/**
 * Where a prompt (or a batch's list) goes, after TorchRL's LoadBalancer: Aurora-Swarm's fixed
 * round-robin, or by load — our own in-flight prompts, the server's running + waiting sequences or
 * KV-cache use from `/metrics`, or a stable hash of the prompt's prefix (so shared prefixes meet
 * a warm prefix cache) that gives way to the least loaded when its endpoint is overloaded.
 */
export type { RouteStrategy };

export const ROUTE_STRATEGIES: readonly RouteStrategy[] = ['round-robin', 'least-requests', 'least-load', 'kv-cache', 'prefix-aware'];

/** Strategies that read `/metrics`; they fall back to our in-flight count where it says nothing. */
export const SCRAPED: ReadonlySet<RouteStrategy> = new Set(['least-load', 'kv-cache']);

/** The prefix that decides a prompt's endpoint under prefix-aware routing. */
const PREFIX_CHARS = 256;

/** What prompts must share to count as one prefix under prefix-aware routing. */
export const prefixKey = (prompt: string): string => prompt.slice(0, PREFIX_CHARS);

/**
 * Lower is better. `inFlight`: our prompts on the endpoint now; `pace`: its recent time per request
 * relative to the swarm's (1 until known) — least-requests weighs its count by it, so an endpoint
 * four times slower holds a quarter as many and its last requests end with everyone else's; `load`:
 * its latest `/metrics`, if scraped.
 */
export function routeScore(strategy: RouteStrategy, inFlight: number, pace: number, load: EndpointLoad | null | undefined): number {
  if (strategy === 'least-load' && load) return load.running + load.waiting + inFlight;
  if (strategy === 'kv-cache' && load?.kvCacheUsage != null) return load.kvCacheUsage * 1e6 + inFlight;
  if (strategy === 'least-requests') return (inFlight + 1) * pace;
  return inFlight;
}

/**
 * The endpoint (0 … count-1) a prompt's prefix hashes to, its first choice (PrefixHomes spreads
 * prefixes that collide): FNV-1a, the same in every process and
 * run (TorchRL uses Python's `hash`, randomized per process, so its choice is not reproducible).
 */
export function prefixSlot(prompt: string, count: number): number {
  let h = 0x811c9dc5;
  const end = Math.min(prompt.length, PREFIX_CHARS);
  for (let i = 0; i < end; i++) {
    h ^= prompt.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // FNV-1a's low bits barely move between prefixes that differ in one character ("Document 1", "Document 2"…),
  // and `% count` reads the low bits: MurmurHash3's finalizer spreads every input bit over them first.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % count;
}

/** Prefix-aware gives way when its endpoint holds more than this many times the average in flight (plus one). */
export const OVERLOAD_FACTOR = 2;

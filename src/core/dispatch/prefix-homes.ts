import { prefixKey, prefixSlot } from './routing.ts';

/**
 * Distinct prefixes remembered per dispatch, at most: beyond this many, prompts rarely share prefixes
 * and plain hashing spreads them evenly, so the rest take their hashed endpoint unrecorded (memory stays
 * bounded at a million unique prompts).
 */
const MAX_REMEMBERED = 4_096;

/**
 * Prefix-aware routing's endpoint for each prefix: consistent hashing with bounded loads (Mirrokni,
 * Thorup and Zadimoghaddam 2018), counted in prefixes. A new prefix goes to its hashed endpoint unless
 * that endpoint already owns more than its even share of the prefixes seen so far; then to the next one
 * along that does not. Plain hashing of a few prefixes collides: 8 documents over 8 endpoints hashed
 * onto 4, two of them with 3 documents each, more than their KV caches held, while 4 servers took only
 * the overflow — fewer cache hits and a longer run than round-robin's. The choice depends only on the
 * prefixes and the order they first come in, so the same prompts land the same way in every run.
 */
export class PrefixHomes {
  private readonly homes = new Map<string, number>();
  private readonly owned: Uint32Array;

  constructor(private readonly count: number) {
    this.owned = new Uint32Array(count);
  }

  /** The endpoint (0 … count-1) of a prompt's prefix. */
  of(prompt: string): number {
    const key = prefixKey(prompt);
    const known = this.homes.get(key);
    if (known !== undefined) return known;
    const first = prefixSlot(prompt, this.count);
    if (this.homes.size >= MAX_REMEMBERED) return first;
    // Even share of the prefixes seen, this one included: every endpoint below it has room.
    const share = Math.ceil((this.homes.size + 1) / this.count);
    let slot = first;
    while (this.owned[slot]! >= share) slot = (slot + 1) % this.count;
    this.owned[slot]!++;
    this.homes.set(key, slot);
    return slot;
  }
}

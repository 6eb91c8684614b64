import { BLOCK_SIZE } from './step-model.ts';

/** One KV-cache block: held by `refs` running sequences; with a hash while its full prompt block may be reused. */
export interface Block {
  hash: string | null;
  refs: number;
}

/**
 * vLLM V1's block pool (vllm/v1/core/block_pool.py), reduced to counts and hashes: free blocks wait
 * in LRU order (freed ones join the tail, allocation evicts from the head); a full block of prompt
 * tokens is cached under its hash until evicted, so a later prompt with the same prefix reuses it.
 */
export class BlockPool {
  /** Insertion order is eviction order. */
  private readonly free = new Set<Block>();
  private readonly cached = new Map<string, Block>();

  constructor(readonly total: number) {
    for (let i = 0; i < total; i++) this.free.add({ hash: null, refs: 0 });
  }

  get freeBlocks(): number {
    return this.free.size;
  }

  /** vLLM's `kv_cache_usage_perc`: blocks held by sequences over all blocks (cached free blocks count as free). */
  usage(): number {
    return 1 - this.free.size / this.total;
  }

  /** The cached blocks of the longest prefix of `hashes`. */
  match(hashes: readonly string[]): Block[] {
    const hits: Block[] = [];
    for (const hash of hashes) {
      const block = this.cached.get(hash);
      if (!block) break;
      hits.push(block);
    }
    return hits;
  }

  /** Takes matched blocks for a sequence: a free one leaves the free queue. */
  touch(blocks: readonly Block[]): void {
    for (const block of blocks) if (block.refs++ === 0) this.free.delete(block);
  }

  /** `n` fresh blocks, evicting the least recently freed cached ones; null when fewer are free. */
  allocate(n: number): Block[] | null {
    if (n > this.free.size) return null;
    const out: Block[] = [];
    for (const block of this.free) {
      if (out.length === n) break;
      out.push(block);
    }
    for (const block of out) {
      this.free.delete(block);
      if (block.hash !== null) this.cached.delete(block.hash);
      block.hash = null;
      block.refs = 1;
    }
    return out;
  }

  /** A block now full of prompt tokens becomes reusable under `hash`, unless another block already holds that prefix. */
  cache(block: Block, hash: string): void {
    if (block.hash !== null || this.cached.has(hash)) return;
    block.hash = hash;
    this.cached.set(hash, block);
  }

  /** A sequence lets go of its blocks; vLLM frees them tail first, so a prompt's last blocks are evicted before its first. */
  release(blocks: readonly Block[]): void {
    for (let i = blocks.length - 1; i >= 0; i--) {
      const block = blocks[i]!;
      if (--block.refs === 0) this.free.add(block);
    }
  }
}

/** Blocks that hold `tokens` tokens. */
export function blocksFor(tokens: number): number {
  return Math.ceil(tokens / BLOCK_SIZE);
}

/**
 * vLLM's hash chain over a prompt's full blocks: each block's hash covers its tokens and its parent's
 * hash, so equal hashes mean equal prefixes. `salt` (the request's `cache_salt`) enters the first
 * block, so differently salted requests never share. Two 32-bit FNV-1a lanes keep collisions out of
 * reach at simulator scale.
 */
export function blockHashes(ids: readonly number[], salt = ''): string[] {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < salt.length; i++) {
    a = Math.imul(a ^ salt.charCodeAt(i), 0x01000193);
    b = Math.imul(b ^ salt.charCodeAt(i), 0x5bd1e995);
  }
  const out: string[] = [];
  const full = Math.floor(ids.length / BLOCK_SIZE) * BLOCK_SIZE;
  for (let i = 0; i < full; i++) {
    a = Math.imul(a ^ ids[i]!, 0x01000193);
    b = Math.imul(b ^ (ids[i]! + 0x9e3779b9), 0x5bd1e995);
    if ((i + 1) % BLOCK_SIZE === 0) out.push(`${(a >>> 0).toString(36)}.${(b >>> 0).toString(36)}`);
  }
  return out;
}

import { basename, dirname, join } from 'node:path';

/**
 * Sharded runs: S processes (the ranks of one `srun -n S` or `mpiexec -n S`, or started by hand)
 * share one run. Shard r owns a contiguous block of the endpoints and exactly the prompts the
 * whole run routes to them (prompt i → endpoint i mod n, Aurora-Swarm's round-robin), so each
 * endpoint sees the prompts it would have seen in one process, and a shard's prompts, in input
 * order, are its own complete run: its own results file, resumed alone with --resume.
 */
export interface Shard {
  rank: number;
  shards: number;
}

/** The launcher's rank variables, in the order they are looked for: Slurm, MPICH/Hydra, PMIx, Open MPI. */
export const RANK_VARIABLES = ['SLURM_PROCID', 'PMI_RANK', 'PMIX_RANK', 'OMPI_COMM_WORLD_RANK'] as const;

/** A shard rank that cannot be used: the message says which value and why. */
export class ShardError extends Error {
  override name = 'ShardError';
}

/** This process's rank: `given` (--shard), else the first launcher variable set; undefined when none is. */
export function shardRank(given: number | undefined, env: NodeJS.ProcessEnv = process.env): { rank: number; from: string } | undefined {
  if (given !== undefined) return { rank: given, from: '--shard' };
  for (const name of RANK_VARIABLES) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    if (!/^\d{1,7}$/.test(value)) throw new ShardError(`${name}=${JSON.stringify(value.slice(0, 20))} is not a rank (a whole number)`);
    return { rank: Number(value), from: name };
  }
  return undefined;
}

/** Checks a shard against the endpoint count: every shard needs at least one endpoint of its own. */
export function checkShard(shard: Shard, endpoints: number): void {
  if (shard.rank >= shard.shards) throw new ShardError(`shard ${shard.rank} of ${shard.shards}: ranks run from 0 to ${shard.shards - 1}`);
  if (shard.shards > endpoints) throw new ShardError(`${shard.shards} shards but ${endpoints} endpoint(s): each shard needs an endpoint of its own`);
}

/** The endpoints shard r owns: [start, end) of the n, contiguous, sizes differing by at most one. */
export function shardEndpoints(shard: Shard, endpoints: number): [start: number, end: number] {
  return [Math.floor((shard.rank * endpoints) / shard.shards), Math.floor(((shard.rank + 1) * endpoints) / shard.shards)];
}

/** Which shard owns endpoint j. */
export function ownerOf(endpoint: number, shards: number, endpoints: number): number {
  // The inverse of shardEndpoints' floor((r·n)/S) ≤ j: the largest such r.
  return Math.floor(((endpoint + 1) * shards - 1) / endpoints);
}

/** The prompt indices shard r owns (those routed to its endpoints), in input order. */
export function shardPrompts(shard: Shard, prompts: number, endpoints: number): number[] {
  const [start, end] = shardEndpoints(shard, endpoints);
  const owned: number[] = [];
  for (let base = 0; base < prompts; base += endpoints) {
    for (let j = start; j < end && base + j < prompts; j++) owned.push(base + j);
  }
  return owned;
}

/** `results.jsonl` → `results.shard-2-of-4.jsonl` (beside it; a name without .jsonl gets the suffix at its end). */
export function shardFileOf(out: string, shard: Shard): string {
  const name = basename(out);
  const tag = `shard-${shard.rank}-of-${shard.shards}`;
  const shardName = name.endsWith('.jsonl') ? `${name.slice(0, -'.jsonl'.length)}.${tag}.jsonl` : `${name}.${tag}`;
  return join(dirname(out), shardName);
}

/** What a shard writes beside its results (`<shard file>.shard.json`), so merging can check the shards belong together. */
export interface ShardInfo extends Shard {
  /** Prompts of the whole run. */
  prompts: number;
  /** Endpoints of the whole run (the slicing depends on it). */
  endpoints: number;
  /** sha256 of the prompts file: shards of different inputs are never merged. */
  promptsSha256: string;
}

export const shardInfoPathOf = (shardFile: string): string => `${shardFile}.shard.json`;

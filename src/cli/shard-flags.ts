import { Option, type Command } from 'commander';
import {
  checkShard,
  fileSha256,
  matchesTags,
  shardEndpoints,
  shardFileOf,
  ShardError,
  shardInfoPathOf,
  shardPrompts,
  shardRank,
  replaceJson,
  type Endpoint,
  promptsAt,
  type PromptList,
  type Shard,
  type ShardInfo,
} from '../core/index.ts';
import { CliError } from './exit.ts';
import { int, type SwarmFlags } from './options.ts';
import { readHostfile } from './swarm.ts';
import type { ShardLauncher } from './detached/spec.ts';

export interface ShardFlags extends Pick<SwarmFlags, 'hostfile' | 'tag' | 'slice' | 'sample'> {
  shards?: number;
  shard?: number;
  shardLauncher?: ShardLauncher | 'auto';
  prompts?: string;
  out?: string;
  resume?: string;
  retryFailed?: string;
}

export function addShardOptions(cmd: Command): Command {
  return cmd
    .option('--shards <S>', 'this process is one of S shards of the run (ranks of srun -n S / mpiexec -n S): it takes its block of the endpoints and the prompts routed to them, and writes FILE.shard-R-of-S.jsonl (merge them with swarm merge)', int('--shards', 1, 100_000))
    .option('--shard <R>', `this shard's rank (default: ${'$'}SLURM_PROCID, $PMI_RANK, $PMIX_RANK or $OMPI_COMM_WORLD_RANK)`, int('--shard', 0, 99_999))
    .addOption(new Option('--shard-launcher <how>', 'with --detach and no --shard: how the run starts its S shards (auto: srun inside a Slurm job, mpiexec inside a PBS job, else processes where the run is); it merges their files at its end').choices(['auto', 'local', 'srun', 'mpiexec']));
}

/** A shard of a run: which one, the endpoint count it was cut from, and how to pick its endpoints. */
export interface ShardPlan {
  shard: Shard;
  endpoints: number;
  only(endpoints: Endpoint[]): Endpoint[];
}

/**
 * `--shards S`: checks the flags, finds the rank, reads the hostfile to cut its endpoints, and
 * points --out / --resume at this shard's own file. Bad input throws CliError (exit 2).
 */
export async function shardPlan(flags: ShardFlags): Promise<ShardPlan | undefined> {
  if (flags.shards === undefined) {
    if (flags.shard !== undefined) throw new CliError('--shard R needs --shards S');
    return undefined;
  }
  if (!flags.hostfile) throw new CliError('--shards needs --hostfile: every shard cuts the same endpoint list');
  if (flags.retryFailed) throw new CliError('--retry-failed works on one shard file as on any results file: give it that file, without --shards');
  if (flags.slice || flags.sample) throw new CliError('--shards cuts the endpoints itself: drop --slice and --sample');
  const base = flags.resume ?? flags.out;
  if (!base) throw new CliError('--shards needs --out FILE (each shard writes FILE.shard-R-of-S.jsonl), or --resume FILE to complete one shard');
  let shard: Shard;
  try {
    const rank = shardRank(flags.shard);
    if (!rank) throw new ShardError(`no shard rank: give --shard R, or start the shards with srun -n ${flags.shards} / mpiexec -n ${flags.shards}`);
    shard = { rank: rank.rank, shards: flags.shards };
    const tagged = (await readHostfile(flags.hostfile)).filter((e) => matchesTags(e, flags.tag));
    checkShard(shard, tagged.length);
    if (flags.resume) flags.resume = shardFileOf(flags.resume, shard);
    else flags.out = shardFileOf(flags.out!, shard);
    const endpoints = tagged.length;
    const [start, end] = shardEndpoints(shard, endpoints);
    return { shard, endpoints, only: (all) => all.filter((e) => matchesTags(e, flags.tag)).slice(start, end) };
  } catch (err) {
    throw err instanceof ShardError ? new CliError(err.message) : err;
  }
}

/** The shard's own prompts (its run is these, in input order) and what it writes beside its results. */
export async function shardInput(plan: ShardPlan, prompts: PromptList, promptsFile: string): Promise<{ prompts: PromptList; info: ShardInfo }> {
  const info: ShardInfo = { ...plan.shard, prompts: prompts.length, endpoints: plan.endpoints, promptsSha256: await fileSha256(promptsFile) };
  return { prompts: promptsAt(prompts, shardPrompts(plan.shard, prompts.length, plan.endpoints)), info };
}

/** `<shard file>.shard.json`, replaced whole. */
export function writeShardInfo(shardFile: string, info: ShardInfo): void {
  replaceJson(shardInfoPathOf(shardFile), info);
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a detached run is: written as `spec.json` in its folder before it starts, read by the
 * starter where the run lives (this machine, or the login node). No secrets: keys reach the run
 * through its environment only.
 */
export interface RunSpec {
  id: string;
  /** The swarm command and its arguments, as the run's own CLI is to get them (after the script). */
  argv: string[];
  /** The results file, as a path there (relative: to the run's folder); none for a command without one. */
  results?: string;
  /** Where the command runs (relative paths in argv mean this folder); default: the run's folder. */
  cwd?: string;
  /** The files the run reads, as paths there, with their sha256 as it started: a resume refuses inputs that changed. */
  inputs?: RecordedInput[];
  /** `--shards S` without a rank: the run starts its S shards itself and merges them at its end. */
  shards?: ShardedSpec;
  /** How many times `swarm resume` started it again. */
  resumes?: number;
  /** The client's options that reach it (` --via LOGIN --runs-dir DIR`), for the commands the run suggests. */
  reach?: string;
}

export interface RecordedInput {
  flag: string;
  path: string;
  sha256: string;
}

/** How a detached run starts its shards: child processes here, or the ranks of the scheduler's launcher inside a job. */
export type ShardLauncher = 'local' | 'srun' | 'mpiexec';

export interface ShardedSpec {
  count: number;
  /** `auto`: decided where the run starts (srun inside a Slurm job, mpiexec inside a PBS one, else local). */
  launcher: ShardLauncher | 'auto';
  /** The shards' base results file (each writes FILE.shard-R-of-S.jsonl beside it; the merge writes FILE). */
  out: string;
}

export const SPEC_FILE = 'spec.json';
/** The run's stdout (a pattern's outcome) and stderr (progress lines, warnings, the summary). */
export const OUTPUT_FILE = 'output.txt';
export const LOG_FILE = 'log.txt';

/** The starter's one line of answer (JSON on stdout, so the client reads it through ssh as well). */
export interface StartReply {
  id: string;
  folder: string;
  pid: number;
  /** `running`: the run began sending; `finished`: it ended already (bad input: exitCode 2, its message in `log`). */
  state: 'starting' | 'running' | 'finished';
  exitCode?: number;
  /** The end of its log when it finished already. */
  log?: string;
}

export const specPath = (folder: string) => join(folder, SPEC_FILE);

/** What the client hands the starter on the login node, on its standard input: the spec, the input files (by name in the run's folder), the keys. */
export interface Delivery {
  spec: RunSpec;
  files: Record<string, string>;
  keys: Record<string, string>;
}

/** What the client hands the login node to resume a run: the keys, and the files it brings (the endpoints to finish on). */
export interface Resumption {
  files: Record<string, string>;
  keys: Record<string, string>;
}

/** Set for the shards of a detached run: the run's own resume command (a shard is not the run, so it has no SWARM_RUN_ID). */
export const RUN_RESUME_COMMAND = 'SWARM_RUN_RESUME';

/**
 * Inside a detached run (SWARM_RUN_DIR, SWARM_RUN_ID) or one of its shards (SWARM_RUN_RESUME): the
 * command that completes it from where it was started, `swarm resume RUN` with the options that reach
 * it; undefined outside one. A detached run's own inputs are copies in its folder: `swarm scatter
 * --resume` with them is no command a user has.
 */
export function resumeCommandOfThisRun(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env[RUN_RESUME_COMMAND]) return env[RUN_RESUME_COMMAND];
  if (!env.SWARM_RUN_DIR || !env.SWARM_RUN_ID) return undefined;
  let reach = '';
  try {
    reach = (JSON.parse(readFileSync(specPath(env.SWARM_RUN_DIR), 'utf8')) as RunSpec).reach ?? '';
  } catch {
    // a spec that cannot be read: the command without the options
  }
  return `swarm resume ${env.SWARM_RUN_ID}${reach}`;
}

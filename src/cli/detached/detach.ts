import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { jobOfHostfile, newRunId } from '../../core/index.ts';
import { secretEnvName } from '../../core/process/secret-env.ts';
import { CliError, EXIT } from '../exit.ts';
import { printable } from '../format.ts';
import { sshLogin, type ReachFlags } from '../swarm.ts';
import { localPlace, remotePlace, type InputFile, type RunsPlace } from './place.ts';
import type { ShardLauncher } from './spec.ts';

/** Where the runs are: here, or on the login node of --via. */
export interface PlaceFlags extends Partial<ReachFlags> {
  runsDir?: string;
  remoteNode?: string;
}

/** The options --detach adds to a pattern command. */
export interface DetachFlags {
  detach?: boolean;
  runsDir?: string;
  remoteNode?: string;
}

/** What detaching reads of a command's flags. */
type DetachingFlags = PlaceFlags & { hostfile?: string; out?: string; resume?: string; retryFailed?: string; shards?: number; shard?: number; shardLauncher?: ShardLauncher | 'auto' };

/** --runs-dir and --remote-node: for the pattern commands (with --detach) and runs/attach/cancel. */
export function addPlaceOptions(cmd: Command): Command {
  return cmd
    .option('--runs-dir <dir>', 'where detached runs live (with --via: on the login node) [default: $SWARM_RUNS_DIR or ~/.swarm-lab/runs]')
    .option('--remote-node <path>', 'with --via: the Node.js (20 or later) to run the CLI with on the login node', 'node');
}

export function addDetachOptions(cmd: Command): Command {
  cmd.addOption(new Option('--detach', 'start the run where the endpoints are (with --via: on the login node) and return with its run id; follow it with swarm attach RUN'));
  return addPlaceOptions(cmd);
}

/** Options only the client uses: they do not go to the run. */
const CLIENT_ONLY: Record<string, boolean> = { '--detach': false, '--runs-dir': true, '--remote-node': true };
/** The login's options: a run on the login node dials the endpoints directly. */
const LOGIN_ONLY: Record<string, boolean> = { '--via': true, '--ssh-option': true, '--ssh-path': true, '--ssh-config': true, '--tunnel-mode': true, '--reconnect-timeout': true, '--remote-hostfile': true };
/** Files the run reads: copied to the login node with the run. */
const INPUTS = ['--prompts', '--hostfile', '--ca-file', '--items', '--template'];
/** Files the run writes: with --via, paths on the login node (from its home folder, as ssh takes them; the run's own folder is its working folder). */
const OUTPUTS = ['--out', '--resume', '--retry-failed'];

/** The options that reach a run from here again (` --via LOGIN --runs-dir DIR`), for the commands a line suggests. */
export function reachOf(flags: PlaceFlags): string {
  return `${flags.via ? ` --via ${flags.via}` : ''}${flags.runsDir ? ` --runs-dir ${flags.runsDir}` : ''}`;
}

/** `swarm resume RUN …`, for a run whose results file a resume completes (a scatter's; another command is started again), else undefined. */
export function resumeCommandOf(run: { id: string; command: readonly string[] }, flags: PlaceFlags): string | undefined {
  return run.command[0] === 'scatter' ? `swarm resume ${run.id}${reachOf(flags)}` : undefined;
}

/** Opens the place the flags name: the login node of --via (one login), else this machine. */
export async function openPlace(flags: PlaceFlags): Promise<RunsPlace> {
  if (!flags.via) return localPlace(flags.runsDir);
  const login = await sshLogin({ sshOption: [], tunnelMode: 'auto', reconnectTimeout: 60, ...flags, via: flags.via });
  try {
    return await remotePlace(login, flags.remoteNode ?? 'node', flags.runsDir);
  } catch (err) {
    await login.close();
    throw err;
  }
}

/**
 * `swarm <pattern> … --detach`: the same command, started where the runs are and left running.
 * It writes its results file (`results.jsonl` in its folder unless --out, --resume or --retry-failed
 * names one: with --via, a path on the login node) and its status file; prints the run id on
 * stdout once the run is sending (bad input ends it at once: its message and exit code here).
 */
export async function detach(command: string, flags: DetachingFlags): Promise<void> {
  const given = process.argv.slice(2);
  if (given[0] !== command) throw new CliError(`--detach: give the command first (swarm ${command} … --detach)`);
  const remote = Boolean(flags.via);
  const place = await openPlace(flags);
  try {
    const id = newRunId();
    const folder = place.folder(id);
    const { argv, inputs } = runArgv(given, remote, place);
    if (remote) await withJobs(inputs, flags.via!);
    const named = flags.resume ?? flags.retryFailed ?? flags.out;
    if (!named) argv.push('--out', `${folder}/results.jsonl`);
    const results = named ? place.path(named) : `${folder}/results.jsonl`;
    // --shards S with no rank: the run starts its shards itself and merges their files into `results`.
    const shards = flags.shards !== undefined && flags.shard === undefined ? { count: flags.shards, launcher: flags.shardLauncher ?? 'auto', out: results } : undefined;
    const where = reachOf(flags);
    const reply = await place.start({ id, argv, results, reach: where, ...(shards ? { shards } : {}) }, inputs, keysFor(flags));
    process.stdout.write(`${id}\n`);
    if (reply.state === 'finished') {
      // Bad input, nothing reachable, or a run small enough to end before it was seen sending: its exit code, and its last lines.
      if (reply.log) process.stderr.write(`${printable(reply.log)}\n`);
      process.stderr.write(`run ${id} ended at once (exit ${reply.exitCode}): swarm attach ${id}${where} shows it\n`);
      process.exitCode = reply.exitCode ?? EXIT.failed;
      return;
    }
    process.stderr.write(`detached run ${id} on ${place.label} (pid ${reply.pid}, ${reply.folder}): swarm attach ${id}${where}\n`);
  } finally {
    await place.close();
  }
}

/** The run's arguments, the client's options dropped, and the files it reads (on the login node: copied there, and the remote hostfile read as its own). */
function runArgv(given: readonly string[], remote: boolean, place: RunsPlace): { argv: string[]; inputs: InputFile[] } {
  const argv: string[] = [given[0]!];
  const inputs: InputFile[] = [];
  for (let i = 1; i < given.length; i++) {
    const word = given[i]!;
    const eq = word.indexOf('=');
    const flag = word.startsWith('--') && eq > 0 ? word.slice(0, eq) : word;
    const hasValue = CLIENT_ONLY[flag] ?? (remote ? LOGIN_ONLY[flag] : undefined);
    const value = eq > 0 && flag !== word ? word.slice(eq + 1) : hasValue ? given[i + 1] : undefined;
    if (hasValue !== undefined) {
      if (flag === '--remote-hostfile' && value !== undefined) argv.push('--hostfile', place.path(value));
      if (hasValue && flag === word) i++;
      continue;
    }
    if (remote && OUTPUTS.includes(flag)) {
      const path = flag === word ? given[++i] : word.slice(eq + 1);
      if (path === undefined) throw new CliError(`${flag} needs a value`);
      argv.push(flag, place.path(path));
      continue;
    }
    if (!INPUTS.includes(flag) || flag !== word) {
      argv.push(word);
      if (INPUTS.includes(flag)) inputs.push(input(flag, word.slice(eq + 1), argv.length - 1, `${flag}=`));
      continue;
    }
    const next = given[++i];
    if (next === undefined) throw new CliError(`${flag} needs a value`);
    argv.push(flag, next);
    inputs.push(input(flag, next, argv.length - 1, ''));
  }
  return { argv, inputs: inputs.filter((f) => f.path) };
}

/**
 * The launched job each hostfile input belongs to, for a run on the login node. A job submitted
 * through that same login has its scheduler there: the record goes without `via`, so the run asks
 * it directly. One submitted through another login keeps its `via`: the run stops at its walltime
 * and says it cannot see an early end. One submitted from this machine is no job of that login's scheduler: none.
 */
async function withJobs(inputs: InputFile[], via: string): Promise<void> {
  for (const input of inputs) {
    const job = input.flag === '--hostfile' ? await jobOfHostfile(input.path) : undefined;
    if (!job?.via) continue;
    const { via: submittedVia, ...record } = job;
    input.job = submittedVia === via ? record : job;
  }
}

function input(flag: string, value: string, at: number, prefix: string): InputFile {
  // --template takes file:PATH; its other values (server, none, auto) are no file.
  if (flag === '--template') return value.startsWith('file:') ? { flag, path: value.slice(5), at, prefix: `${prefix}file:` } : { flag, path: '', at: -1, prefix };
  return { flag, path: value, at, prefix };
}

/**
 * The keys the run needs, from this environment: SWARM_API_KEY, each `key=env:NAME` of a local
 * hostfile, and each `key=secret:NAME`'s as the editor handed it (secretEnvName). They reach the run's environment only (through the starter's standard input over ssh),
 * never an argument or a file.
 */
export function keysFor(flags: { hostfile?: string }): Record<string, string> {
  const names = new Set(['SWARM_API_KEY']);
  if (flags.hostfile) {
    try {
      const text = readFileSync(flags.hostfile, 'utf8');
      for (const m of text.matchAll(/key=env:([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(m[1]!);
      // The keys of key=secret:NAME an editor handed this process (a detached run started from it).
      for (const m of text.matchAll(/key=secret:([A-Za-z0-9._-]+)/g)) names.add(secretEnvName(m[1]!));
    } catch {
      // the run itself says what is wrong with the hostfile
    }
  }
  const keys: Record<string, string> = {};
  for (const name of names) if (process.env[name]) keys[name] = process.env[name]!;
  return keys;
}

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { mergeShards, MergeError, partialPathOf, readStatus, shardFileOf, type RunStatus } from '../../core/index.ts';
import { EXIT, signalExit } from '../exit.ts';
import { printable } from '../format.ts';
import { claimStop, stopped } from '../interrupt.ts';
import { mergeServerContext } from '../commands/merge.ts';
import { noteError, noteWarning, reportCounts, SHARD_STATUS_DIR } from '../run-status.ts';
import { resumeCommandOfThisRun, RUN_RESUME_COMMAND, specPath, type RunSpec, type ShardLauncher } from './spec.ts';

const POLL_MS = 500;

/**
 * A detached run of `--shards S`: it starts its shards — child processes here, or the ranks of the
 * scheduler's own launcher (`srun` inside a Slurm job, `mpiexec` inside a PBS one) — adds up their
 * status files into its own while they run, and merges their files into one results file in input
 * order at its end. Started again (`swarm resume`), it runs only the shards whose file is not whole
 * and all ok, each alone, and merges. A cancel (SIGTERM to its process group, which srun and
 * mpiexec pass on to their ranks) lets every shard write its rows, then merges what they kept.
 * Returns the run's exit code.
 */
export async function runShards(dir: string, script = process.argv[1]!): Promise<number> {
  const spec = JSON.parse(readFileSync(specPath(dir), 'utf8')) as RunSpec;
  const { count, out: base } = spec.shards!;
  const cwd = resolve(dir, spec.cwd ?? '.');
  const out = resolve(cwd, base);
  const files = Array.from({ length: count }, (_, rank) => shardFileOf(out, { rank, shards: count }));
  const statusDir = join(dir, 'shards');
  mkdirSync(statusDir, { recursive: true });
  const shardStatus = (rank: number) => readStatus(join(statusDir, `${rank}.json`));
  // A shard is done when its file is whole and its last run ended with every prompt ok.
  const todo = files.map((_, rank) => rank).filter((rank) => !(existsSync(files[rank]!) && !existsSync(partialPathOf(files[rank]!)) && shardStatus(rank)?.exitCode === 0));
  // A shard run again counts afresh: its last status goes (its kept rows are in its file).
  for (const rank of todo) rmSync(join(statusDir, `${rank}.json`), { force: true });
  const started = (rank: number) => existsSync(files[rank]!) || existsSync(partialPathOf(files[rank]!));
  const launcher = launcherOf(spec.shards!.launcher);
  // A shard is not the run (no status or results of the run's own), but what it stopped names the run's resume.
  const env: NodeJS.ProcessEnv = { ...process.env, [SHARD_STATUS_DIR]: statusDir, [RUN_RESUME_COMMAND]: resumeCommandOfThisRun() ?? '' };
  for (const name of ['SWARM_RUN_DIR', 'SWARM_RUN_ID', 'SWARM_RUN_RESULTS']) delete env[name];
  const node = [process.execPath, resolve(script)];
  const children: ChildProcess[] = [];
  const start = (command: string[]) => {
    const child = spawn(command[0]!, command.slice(1), { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
    children.push(child);
    return new Promise<number>((done) => {
      child.once('error', (err) => (process.stderr.write(`cannot start ${command[0]}: ${printable(err.message)}\n`), done(EXIT.failed)));
      child.once('exit', (code, signal) => done(signal ? signalExit(signal) : (code ?? EXIT.failed)));
    });
  };
  const argvOf = (rank: number | undefined) => shardArgv(spec.argv, rank === undefined || !started(rank) ? '--out' : '--resume', rank);
  let exits: Array<Promise<number>>;
  if (todo.length === count && !todo.some(started) && launcher !== 'local') {
    // One launch of S ranks: each takes its rank from the launcher.
    exits = [start([launcher, '-n', String(count), ...launcherFlags(launcher), ...node, ...argvOf(undefined)])];
  } else {
    // Each shard by itself (a resumed one alone, as the issue asks of a shard that died).
    exits = todo.map((rank) => start([...(launcher === 'local' ? [] : [launcher, '-n', '1', ...launcherFlags(launcher)]), ...node, ...argvOf(rank)]));
  }
  process.stderr.write(`shards ${todo.join(', ')} of ${count} started (${launcher})\n`);
  const stop = claimStop(); // a cancel reaches the shards too (one process group): wait for them to write their rows
  let ended = false;
  const all = Promise.all(exits).finally(() => (ended = true));
  while (!ended) {
    report(files.map((_, rank) => shardStatus(rank)));
    await Promise.race([all, new Promise((r) => setTimeout(r, POLL_MS)), ...(stop.reason() ? [] : [stopped(stop)])]);
  }
  const codes = await all;
  report(files.map((_, rank) => shardStatus(rank)));
  try {
    const merged = await mergeShards(out, files);
    await mergeServerContext(out, files);
    reportCounts({ total: merged.rows, done: merged.rows, ok: merged.rows - merged.notOk, failed: merged.notOk - merged.cancelled, cancelled: merged.cancelled });
    process.stderr.write(`merged ${count} shard(s): ${merged.rows.toLocaleString('en-US')} rows in input order to ${printable(out)}\n`);
    if (stop.by()) return signalExit(stop.by()!);
    return merged.notOk ? EXIT.failed : EXIT.ok;
  } catch (err) {
    if (!(err instanceof MergeError)) throw err;
    if (!stop.by() && codes.every((c) => c === EXIT.badInput)) {
      // Every shard refused its input (its message is in the log, just before): nothing to resume.
      const why = "every shard ended with exit 2 (bad input: the shards' messages are above in log.txt)";
      noteError(why);
      process.stderr.write(`${why}\n`);
      return EXIT.badInput;
    }
    const failed = todo.filter((_, i) => codes.length === todo.length && codes[i] !== 0 && codes[i] !== 1);
    const why = `${err.message}${failed.length ? ` (shard ${failed.join(', ')} ended with exit ${failed.map((r) => codes[todo.indexOf(r)]).join(', ')})` : ''}; swarm resume ${spec.id} runs the unfinished shards alone and merges`;
    noteError(why);
    process.stderr.write(`${why}\n`);
    return stop.by() ? signalExit(stop.by()!) : EXIT.failed;
  }
}

/** The shards' counts added up: their prompts, what is done, ok, failed, cancelled; their errors and warnings. */
function report(shards: Array<RunStatus | undefined>): void {
  // Until a shard is sending, the run is starting: shards that all refuse their input end it as bad input, at once.
  if (!shards.some((s) => s?.state === 'running' || (s?.state === 'finished' && s.exitCode !== EXIT.badInput))) return;
  const sum = { total: 0, done: 0, ok: 0, failed: 0, cancelled: 0 };
  for (const s of shards) {
    if (!s) continue;
    for (const k of Object.keys(sum) as Array<keyof typeof sum>) sum[k] += s[k];
    for (const e of s.errors) noteError(e);
    for (const w of s.warnings ?? []) noteWarning(w);
  }
  reportCounts(sum);
}

/** A shard's command: the run's, with its rank (none: the launcher gives it) and its file completed (--resume) or begun (--out). */
function shardArgv(argv: readonly string[], flag: '--out' | '--resume', rank: number | undefined): string[] {
  const result: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--out' || word === '--resume') result.push(flag, argv[++i]!);
    else if (word.startsWith('--out=') || word.startsWith('--resume=')) result.push(`${flag}=${word.slice(word.indexOf('=') + 1)}`);
    else result.push(word);
  }
  return rank === undefined ? result : [...result, '--shard', String(rank)];
}

/**
 * srun: a shard that dies leaves the others running (it is resumed alone), and the ranks may
 * outnumber the job's CPUs (a shard is a client waiting on the network, not a computation).
 */
function launcherFlags(launcher: ShardLauncher): string[] {
  return launcher === 'srun' ? ['--kill-on-bad-exit=0', '--overcommit'] : [];
}

/** `auto`: the launcher of the job this runs in (Slurm: srun, PBS: mpiexec), else child processes here. */
function launcherOf(given: ShardLauncher | 'auto'): ShardLauncher {
  if (given !== 'auto') return given;
  if (process.env.SLURM_JOB_ID) return 'srun';
  if (process.env.PBS_JOBID) return 'mpiexec';
  return 'local';
}

import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { shardRank, STATUS_FILE, writeStatus, type Run, type RunStatus } from '../core/index.ts';
import { throttle } from '../core/run/throttle.ts';
import { printable } from './format.ts';
import { specPath, type RunSpec } from './detached/spec.ts';

/** How often a detached run's status file is replaced while results come in. */
const EVERY_MS = 500;
/** Distinct errors, and warnings, a status keeps (the results file has every failure). */
const KEPT = 10;

/** Set by a detached run of --shards S for its shards: the folder where each writes `<rank>.json`, a status file as a run's. */
export const SHARD_STATUS_DIR = 'SWARM_SHARD_STATUS_DIR';

/**
 * Inside a detached run (SWARM_RUN_DIR names its folder): the status file says the run is starting
 * from the first moment, follows its progress and errors while it runs, and says how it ended when
 * the process exits — however it exits, even on bad input before any run began. A shard of a
 * detached sharded run writes its own, which the run adds up.
 */
let status: RunStatus | undefined;
let path = '';

export function installRunStatus(env: NodeJS.ProcessEnv = process.env): void {
  const dir = env.SWARM_RUN_DIR;
  const shardDir = env[SHARD_STATUS_DIR];
  if (dir) path = join(dir, STATUS_FILE);
  else if (shardDir) {
    const rank = rankOf(process.argv, env);
    if (rank === undefined) return; // its flags are bad: it says so and ends; the run sees its exit
    path = join(shardDir, `${rank}.json`);
  } else return;
  const now = new Date().toISOString();
  status = {
    id: env.SWARM_RUN_ID ?? '',
    // A run's command is what the user gave (its spec), not the internal command that runs it.
    command: (dir && specArgv(dir)) || process.argv.slice(2),
    state: 'starting',
    pid: process.pid,
    host: hostname(),
    startedAt: now,
    updatedAt: now,
    wallMs: 0,
    total: 0,
    done: 0,
    ok: 0,
    failed: 0,
    cancelled: 0,
    errors: [],
    warnings: [],
    ...(env.SWARM_RUN_RESULTS ? { results: env.SWARM_RUN_RESULTS } : {}),
  };
  const started = Date.now();
  write();
  process.on('exit', (code) => {
    status!.state = 'finished';
    status!.exitCode = process.exitCode !== undefined ? Number(process.exitCode) : code;
    status!.wallMs = Date.now() - started;
    write();
  });
}

function specArgv(dir: string): string[] | undefined {
  try {
    return (JSON.parse(readFileSync(specPath(dir), 'utf8')) as RunSpec).argv;
  } catch {
    return undefined;
  }
}

/** A shard's rank, as its command will take it: --shard R, else the launcher's variable. */
function rankOf(argv: readonly string[], env: NodeJS.ProcessEnv): number | undefined {
  const at = argv.findIndex((a) => a === '--shard' || a.startsWith('--shard='));
  const given = at < 0 ? undefined : argv[at]!.includes('=') ? argv[at]!.slice('--shard='.length) : argv[at + 1];
  try {
    if (given !== undefined) return /^\d{1,7}$/.test(given) ? Number(given) : undefined;
    return shardRank(undefined, env)?.rank;
  } catch {
    return undefined;
  }
}

function write(): void {
  if (!status) return;
  status.updatedAt = new Date().toISOString();
  try {
    writeStatus(path, status);
  } catch (err) {
    // The results file is what counts; a status that cannot be written is said once in the run's log.
    process.stderr.write(`warning: cannot write ${printable(path)}: ${printable((err as Error).message)}\n`);
  }
}

/** Feeds a run's progress and errors to the status file (nothing outside a detached run). */
export function reportRun(run: Run<unknown>): void {
  if (!status) return;
  const s = status;
  s.state = 'running';
  write();
  // Trailing edge too: a burst of answers followed by a server that hangs would otherwise leave the
  // burst's first count on disk for as long as the hang lasts.
  const paced = throttle(write, EVERY_MS);
  run.on('progress', (p) => {
    Object.assign(s, { total: p.total, done: p.done, ok: p.ok, failed: p.failed, cancelled: p.cancelled, wallMs: p.elapsedMs });
    paced.call();
    if (p.done === p.total) paced.flush();
  });
  run.on('result', (r) => {
    if (r.status === 'failed' && r.error) noteError(r.error.slice(0, 300));
  });
  run.on('warning', (w) => noteWarning(w.slice(0, 300)));
}

/** The counts of a run that is not one Run (a sharded run adding up its shards), written now. */
export function reportCounts(counts: Pick<RunStatus, 'total' | 'done' | 'ok' | 'failed' | 'cancelled'>): void {
  if (!status) return;
  Object.assign(status, counts, { state: 'running', wallMs: Date.now() - Date.parse(status.startedAt) });
  write();
}

/** Keeps an error among the status's last few (once). */
export function noteError(error: string): void {
  if (status) keep(status.errors, error);
}

/** Keeps a warning among the status's last few (once). */
export function noteWarning(warning: string): void {
  if (status) keep((status.warnings ??= []), warning);
}

function keep(list: string[], line: string): void {
  if (list.includes(line)) return;
  list.push(line);
  if (list.length > KEPT) list.shift();
}

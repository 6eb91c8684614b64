import { hostname } from 'node:os';
import { join } from 'node:path';
import { STATUS_FILE, writeStatus, type Run, type RunStatus } from '../core/index.ts';
import { printable } from './format.ts';

/** How often a detached run's status file is replaced while results come in. */
const EVERY_MS = 500;
/** Distinct errors a status keeps (the results file has every one). */
const ERRORS_KEPT = 10;

/**
 * Inside a detached run (SWARM_RUN_DIR names its folder): the status file says the run is starting
 * from the first moment, follows its progress and errors while it runs, and says how it ended when
 * the process exits — however it exits, even on bad input before any run began.
 */
let status: RunStatus | undefined;
let path = '';

export function installRunStatus(env: NodeJS.ProcessEnv = process.env): void {
  const dir = env.SWARM_RUN_DIR;
  if (!dir) return;
  path = join(dir, STATUS_FILE);
  const now = new Date().toISOString();
  status = {
    id: env.SWARM_RUN_ID ?? '',
    command: process.argv.slice(2),
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
  let last = 0;
  const note = (error: string) => {
    if (s.errors.includes(error)) return;
    s.errors.push(error);
    if (s.errors.length > ERRORS_KEPT) s.errors.shift();
  };
  run.on('progress', (p) => {
    Object.assign(s, { total: p.total, done: p.done, ok: p.ok, failed: p.failed, cancelled: p.cancelled, wallMs: p.elapsedMs });
    const now = Date.now();
    if (now - last >= EVERY_MS || p.done === p.total) {
      last = now;
      write();
    }
  });
  run.on('result', (r) => {
    if (r.status === 'failed' && r.error) note(r.error.slice(0, 300));
  });
  run.on('warning', (w) => note(w.slice(0, 300)));
}

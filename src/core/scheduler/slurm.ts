import type { SchedulerAdapter } from './adapter.ts';
import { errorLines, SchedulerError } from './host.ts';
import { expandHostlist } from './hostlist.ts';
import { isFinished, type JobPhase, type JobState } from './job.ts';
import { parseDuration } from './walltime.ts';

/** Slurm's job states (squeue(1) "JOB STATE CODES") in our words. */
const PHASES: Record<string, JobPhase> = {
  PENDING: 'queued', REQUEUED: 'queued', REQUEUE_FED: 'queued', REQUEUE_HOLD: 'held', RESV_DEL_HOLD: 'held', SUSPENDED: 'held', STOPPED: 'held',
  CONFIGURING: 'starting', RUNNING: 'running', RESIZING: 'running', SIGNALING: 'running', STAGE_OUT: 'ending', COMPLETING: 'ending',
  COMPLETED: 'completed', FAILED: 'failed', BOOT_FAIL: 'failed', OUT_OF_MEMORY: 'failed', SPECIAL_EXIT: 'failed',
  CANCELLED: 'cancelled', TIMEOUT: 'timeout', DEADLINE: 'timeout', NODE_FAIL: 'lost', PREEMPTED: 'lost', REVOKED: 'lost',
};

function phase(state: string, reason: string | undefined): JobPhase {
  const p = PHASES[state] ?? 'queued';
  // A pending job held by its user or an admin will not start on its own.
  return p === 'queued' && reason && /^Job(Held|Hold)/.test(reason) ? 'held' : p;
}

/**
 * Slurm through `sbatch --parsable`, `scontrol show job -o` (one job, one line) and `squeue --json`.
 * squeue's JSON is read for the fields Slurm 22.05 (OpenAPI v0.0.38) through 24.x share; 22.05
 * ignores `--jobs` and `--partition` with `--json`, so the filtering is ours.
 */
export const slurm: SchedulerAdapter = {
  kind: 'slurm',
  checkId(id) {
    if (!/^\d+(_\d+)?$/.test(id)) throw new SchedulerError(`"${id}" is not a Slurm job id (digits, or digits_digits for an array task)`, true);
    return id;
  },
  submitArgv: (scriptPath) => ['sbatch', '--parsable', scriptPath],
  parseSubmit(result) {
    // --parsable: "id" or "id;cluster".
    const id = /^(\d+)(?:;\S+)?\s*$/m.exec(result.stdout)?.[1];
    if (result.code !== 0 || !id) throw new SchedulerError(`sbatch refused the job: ${errorLines(result)}`, result.code !== 0);
    return id;
  },
  statusArgv: (id) => ['scontrol', 'show', 'job', '-o', id],
  parseStatus(result, id) {
    if (result.code !== 0) {
      if (/Invalid job id/i.test(result.stderr)) return undefined;
      throw new SchedulerError(`scontrol show job ${id}: ${errorLines(result)}`);
    }
    const line = result.stdout.split('\n').find((l) => l.startsWith(`JobId=${id} `) || l.startsWith(`JobId=${id.split('_')[0]} `));
    return line ? fromScontrol(parseScontrolLine(line)) : undefined;
  },
  queueArgv: () => ['squeue', '--json'],
  parseQueue(result) {
    if (result.code !== 0) throw new SchedulerError(`squeue --json: ${errorLines(result)}`);
    let data: { jobs?: SqueueJob[] };
    try {
      data = JSON.parse(result.stdout) as { jobs?: SqueueJob[] };
    } catch (err) {
      throw new SchedulerError(`squeue --json printed no JSON (${(err as Error).message}); Slurm 21.08 or newer is needed`);
    }
    return (data.jobs ?? []).map(fromSqueue);
  },
  cancelArgv: (id) => ['scancel', id],
  parseCancel(result, id) {
    // scancel of a job that already ended says so and is what the caller wanted.
    if (result.code !== 0 && !/already completing or completed|Invalid job id/i.test(result.stderr)) throw new SchedulerError(`scancel ${id}: ${errorLines(result)}`);
  },
};

/** `Key=Value Key=Value …` of `scontrol -o`; a value may hold spaces (a job name), so keys mark the cuts. */
export function parseScontrolLine(line: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const part of line.trim().split(/ (?=[A-Za-z][A-Za-z0-9_/:]*=)/)) {
    const eq = part.indexOf('=');
    if (eq > 0) fields[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return fields;
}

/** scontrol's times are local, without a zone ("2026-11-26T07:45:40"); Unknown, None and N/A are none. */
function localTime(text: string | undefined): Date | undefined {
  if (!text || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(text)) return undefined;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

function fromScontrol(f: Record<string, string>): JobState {
  const state = (f.JobState ?? 'UNKNOWN').split(/[+ ]/)[0]!;
  const reason = f.Reason && f.Reason !== 'None' ? f.Reason : undefined;
  const p = phase(state, reason);
  const start = localTime(f.StartTime);
  const job: JobState = { id: f.JobId!, phase: p, schedulerState: state, nodes: f.NodeList && f.NodeList !== '(null)' ? expandHostlist(f.NodeList) : [] };
  if (f.JobName) job.name = f.JobName;
  if (reason) job.reason = reason;
  if (f.Partition) job.queue = f.Partition;
  if (f.UserId) job.user = f.UserId.replace(/\(\d+\)$/, '');
  if (f.Priority && /^\d+$/.test(f.Priority)) job.priority = Number(f.Priority);
  const submitted = localTime(f.SubmitTime);
  if (submitted) job.submittedAt = submitted;
  // A pending job's StartTime is the backfill scheduler's estimate, when it has made one.
  if (start && (p === 'queued' || p === 'held')) job.startEstimate = start;
  else if (start) job.startedAt = start;
  const limit = parseDuration(f.TimeLimit);
  if (limit !== undefined) job.walltimeSeconds = limit;
  const exit = /^(\d+):(\d+)$/.exec(f.ExitCode ?? '');
  if (exit && isFinished(p)) job.exitCode = Number(exit[2]) ? 128 + Number(exit[2]) : Number(exit[1]);
  return job;
}

/** The fields of squeue's JSON job we read (Slurm 22.05's shape; later versions wrap numbers, see num()). */
interface SqueueJob {
  job_id: number;
  name?: string;
  job_state?: string | string[];
  state_reason?: string;
  partition?: string;
  user_name?: string;
  priority?: Numberish;
  submit_time?: Numberish;
  start_time?: Numberish;
  time_limit?: Numberish;
  nodes?: string;
  exit_code?: Numberish | { return_code?: Numberish; signal?: { id?: Numberish } };
}

/** 22.05 writes a number; 23.02+ `{set, infinite, number}`. */
type Numberish = number | { set?: boolean; infinite?: boolean; number?: number } | null;

function num(v: Numberish | undefined): number | undefined {
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object' && v.set !== false && !v.infinite && typeof v.number === 'number') return v.number;
  return undefined;
}

function epoch(v: Numberish | undefined): Date | undefined {
  const s = num(v);
  return s ? new Date(s * 1000) : undefined;
}

function fromSqueue(j: SqueueJob): JobState {
  const state = (Array.isArray(j.job_state) ? j.job_state[0] : j.job_state) ?? 'UNKNOWN';
  const reason = j.state_reason && j.state_reason !== 'None' ? j.state_reason : undefined;
  const p = phase(state, reason);
  const job: JobState = { id: String(j.job_id), phase: p, schedulerState: state, nodes: j.nodes ? expandHostlist(j.nodes) : [] };
  if (j.name) job.name = j.name;
  if (reason) job.reason = reason;
  if (j.partition) job.queue = j.partition;
  if (j.user_name) job.user = j.user_name;
  const priority = num(j.priority);
  if (priority !== undefined) job.priority = priority;
  const submitted = epoch(j.submit_time);
  if (submitted) job.submittedAt = submitted;
  const start = epoch(j.start_time);
  if (start && (p === 'queued' || p === 'held')) job.startEstimate = start;
  else if (start) job.startedAt = start;
  const limit = num(j.time_limit);
  if (limit !== undefined) job.walltimeSeconds = limit * 60; // minutes
  return job;
}

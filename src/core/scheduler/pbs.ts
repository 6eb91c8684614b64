import type { SchedulerAdapter } from './adapter.ts';
import { errorLines, SchedulerError } from './host.ts';
import type { JobPhase, JobState } from './job.ts';
import { parseDuration } from './walltime.ts';

/** PBS Professional's job states (qstat(1B)) in our words; F is resolved by the exit status. */
const PHASES: Record<string, JobPhase> = {
  Q: 'queued', H: 'held', W: 'held', S: 'held', U: 'held', T: 'starting', M: 'queued', B: 'running', R: 'running', E: 'ending', X: 'completed', F: 'completed',
};

/** PBS's exit status of a job killed at its walltime (JOB_EXEC_KILL_WALLTIME). */
const KILLED_WALLTIME = -29;

/**
 * PBS Professional / OpenPBS through `qsub`, `qstat -f -F json` and `qdel`. `-x` keeps finished jobs
 * in view (job history), so a job that ended between two polls says how it ended.
 */
export const pbs: SchedulerAdapter = {
  kind: 'pbs',
  checkId(id) {
    if (!/^\d+(\[\d*\])?(\.[A-Za-z0-9][A-Za-z0-9.-]*)?$/.test(id)) throw new SchedulerError(`"${id}" is not a PBS job id (digits, then .server)`, true);
    return id;
  },
  submitArgv: (scriptPath) => ['qsub', scriptPath],
  parseSubmit(result) {
    const id = result.stdout.trim().split('\n').at(-1)?.trim() ?? '';
    if (result.code !== 0 || !/^\d+(\[\])?\.\S+$/.test(id)) throw new SchedulerError(`qsub refused the job: ${errorLines(result)}`, result.code !== 0);
    return id;
  },
  statusArgv: (id) => ['qstat', '-f', '-F', 'json', '-x', id],
  parseStatus(result, id) {
    // "Unknown Job Id" once the history has forgotten it (or it never was); other trouble is an error.
    if (result.code !== 0 && /Unknown Job Id/i.test(result.stderr)) return undefined;
    if (result.code !== 0) throw new SchedulerError(`qstat ${id}: ${errorLines(result)}`);
    const jobs = readJobs(result.stdout);
    return jobs.find((j) => j.id === id) ?? jobs.find((j) => j.id.split('.')[0] === id.split('.')[0]);
  },
  queueArgv: (queue) => ['qstat', '-f', '-F', 'json', ...(queue ? [queue] : [])],
  parseQueue(result) {
    if (result.code !== 0) throw new SchedulerError(`qstat: ${errorLines(result)}`);
    return readJobs(result.stdout);
  },
  cancelArgv: (id) => ['qdel', id],
  parseCancel(result, id) {
    if (result.code !== 0 && !/Unknown Job Id|Job has finished|Request invalid for state of job/i.test(result.stderr)) throw new SchedulerError(`qdel ${id}: ${errorLines(result)}`);
  },
};

/** The attributes of `qstat -f -F json` we read. Times are ctime strings in the server's zone. */
interface PbsJob {
  Job_Name?: string;
  Job_Owner?: string;
  job_state?: string;
  queue?: string;
  Priority?: number;
  qtime?: string;
  stime?: string;
  comment?: string;
  exec_host?: string;
  Exit_status?: number;
  Resource_List?: { walltime?: string | number };
  estimated?: { start_time?: string };
}

function readJobs(text: string): JobState[] {
  let data: { Jobs?: Record<string, PbsJob> };
  try {
    data = JSON.parse(text) as typeof data;
  } catch {
    // PBS releases before 2020 printed environment values unescaped in Variable_List, which breaks
    // the JSON when a value holds a quote or a backslash. We never read that list: drop it and retry.
    try {
      data = JSON.parse(text.replace(/"Variable_List"\s*:\s*\{[^}]*\}\s*,?/g, '').replace(/,(\s*\})/g, '$1')) as typeof data;
    } catch (err) {
      throw new SchedulerError(`qstat -F json printed no JSON (${(err as Error).message})`);
    }
  }
  return Object.entries(data.Jobs ?? {}).map(([id, j]) => fromQstat(id, j));
}

function ctime(text: string | undefined): Date | undefined {
  if (!text) return undefined;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

function fromQstat(id: string, j: PbsJob): JobState {
  const state = j.job_state ?? '?';
  let p = PHASES[state] ?? 'queued';
  if ((state === 'F' || state === 'X') && j.Exit_status !== undefined && j.Exit_status !== 0) {
    // >256: killed by signal 256+n (qdel sends SIGTERM); negative: PBS could not run it or ended it.
    p = j.Exit_status === KILLED_WALLTIME ? 'timeout' : j.Exit_status > 256 ? 'cancelled' : 'failed';
  }
  const job: JobState = { id, phase: p, schedulerState: state, nodes: j.exec_host ? [...new Set(j.exec_host.split('+').map((h) => h.split('/')[0]!))] : [] };
  if (j.Job_Name) job.name = j.Job_Name;
  if (j.comment) job.reason = j.comment;
  if (j.queue) job.queue = j.queue;
  if (j.Job_Owner) job.user = j.Job_Owner.split('@')[0]!;
  if (typeof j.Priority === 'number') job.priority = j.Priority;
  const submitted = ctime(j.qtime);
  if (submitted) job.submittedAt = submitted;
  const started = ctime(j.stime);
  if (started) job.startedAt = started;
  const estimate = ctime(j.estimated?.start_time);
  if (estimate && (p === 'queued' || p === 'held')) job.startEstimate = estimate;
  const walltime = j.Resource_List?.walltime;
  const limit = typeof walltime === 'number' ? walltime : parseDuration(walltime, 'seconds');
  if (limit !== undefined) job.walltimeSeconds = limit;
  if (j.Exit_status !== undefined) job.exitCode = j.Exit_status;
  return job;
}

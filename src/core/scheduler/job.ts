/** Which batch scheduler a job runs under. */
export type SchedulerKind = 'slurm' | 'pbs';

/**
 * A job's state in words both schedulers share. `held`: queued but not eligible (held by a user or an
 * admin, suspended, waiting for a start time); `lost`: ended by the machine, not the job (a node
 * failed, preempted).
 */
export type JobPhase = 'queued' | 'held' | 'starting' | 'running' | 'ending' | 'completed' | 'failed' | 'cancelled' | 'timeout' | 'lost';

const FINISHED: ReadonlySet<JobPhase> = new Set(['completed', 'failed', 'cancelled', 'timeout', 'lost']);

export function isFinished(phase: JobPhase): boolean {
  return FINISHED.has(phase);
}

/** What a scheduler tells about one job, read from its own output. */
export interface JobState {
  id: string;
  name?: string;
  phase: JobPhase;
  /** The scheduler's own word for the state (PENDING, Q, …), shown next to ours. */
  schedulerState: string;
  /** Why it waits or how it ended, as the scheduler words it (Slurm's Reason, PBS's comment). */
  reason?: string;
  queue?: string;
  user?: string;
  /** Larger runs first (Slurm's priority); PBS jobs as listed carry none. */
  priority?: number;
  submittedAt?: Date;
  /** The scheduler's estimate while queued, when it gives one (Slurm's backfill, PBS's estimated.start_time). */
  startEstimate?: Date;
  startedAt?: Date;
  walltimeSeconds?: number;
  /** 1 = the next of its queue to start; set from a queue listing. */
  position?: number;
  nodes: string[];
  exitCode?: number;
}

/** When the walltime runs out: start + walltime, if both are known. */
export function walltimeEnd(job: JobState): Date | undefined {
  return job.startedAt && job.walltimeSeconds !== undefined ? new Date(job.startedAt.getTime() + job.walltimeSeconds * 1000) : undefined;
}

/**
 * Where a queued job stands in its queue: 1 + the jobs of the same queue that are queued and
 * start before it (higher priority, then earlier submission — the order both schedulers fall back
 * to). Undefined unless the job is queued and listed.
 */
export function queuePosition(jobs: readonly JobState[], id: string): number | undefined {
  const job = jobs.find((j) => j.id === id);
  if (!job || job.phase !== 'queued') return undefined;
  const ahead = (other: JobState) => {
    const p = (other.priority ?? 0) - (job.priority ?? 0);
    if (p !== 0) return p > 0;
    const t = (other.submittedAt?.getTime() ?? 0) - (job.submittedAt?.getTime() ?? 0);
    return t !== 0 ? t < 0 : other.id < job.id;
  };
  return 1 + jobs.filter((o) => o.id !== id && o.phase === 'queued' && o.queue === job.queue && ahead(o)).length;
}

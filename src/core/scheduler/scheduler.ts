import type { SchedulerAdapter } from './adapter.ts';
import type { JobHost } from './host.ts';
import { queuePosition, type JobState, type SchedulerKind } from './job.ts';
import { pbs } from './pbs.ts';
import { slurm } from './slurm.ts';

const ADAPTERS: Record<SchedulerKind, SchedulerAdapter> = { slurm, pbs };

/** Submit, watch, list and cancel jobs of one scheduler on one host (this machine, or the login node). */
export class Scheduler {
  private readonly adapter: SchedulerAdapter;

  constructor(
    readonly kind: SchedulerKind,
    readonly host: JobHost,
  ) {
    this.adapter = ADAPTERS[kind];
  }

  /** Submits the job script already written at `scriptPath` on the host; returns the job id. */
  async submit(scriptPath: string): Promise<string> {
    return this.adapter.parseSubmit(await this.host.run(this.adapter.submitArgv(scriptPath)));
  }

  /**
   * The job's state, with its place in the queue while it waits (one more command: the queue's
   * listing). Undefined once the scheduler has forgotten it.
   */
  async status(id: string): Promise<JobState | undefined> {
    const job = this.adapter.parseStatus(await this.host.run(this.adapter.statusArgv(this.adapter.checkId(id))), id);
    if (job?.phase === 'queued') {
      const position = queuePosition(await this.list(job.queue), job.id);
      if (position !== undefined) job.position = position;
    }
    return job;
  }

  /** Every job the scheduler lists (of one queue, when given). */
  async list(queue?: string): Promise<JobState[]> {
    const jobs = this.adapter.parseQueue(await this.host.run(this.adapter.queueArgv(queue)));
    return queue ? jobs.filter((j) => j.queue === undefined || j.queue === queue) : jobs;
  }

  async cancel(id: string): Promise<void> {
    this.adapter.parseCancel(await this.host.run(this.adapter.cancelArgv(this.adapter.checkId(id))), id);
  }
}

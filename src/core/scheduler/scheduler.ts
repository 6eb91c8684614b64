import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay, type RetryPolicy } from '../pool/retry.ts';
import type { SchedulerAdapter } from './adapter.ts';
import { SchedulerError, type CommandResult, type JobHost } from './host.ts';
import { queuePosition, type JobState, type SchedulerKind } from './job.ts';
import { pbs } from './pbs.ts';
import { slurm } from './slurm.ts';

const ADAPTERS: Record<SchedulerKind, SchedulerAdapter> = { slurm, pbs };

/**
 * A question to the scheduler (a job's state, the queue) that its command failed to answer is asked
 * again for about a minute (1, 2, 4, 8, 15, 15, 15 s): a busy or restarting controller (Slurm's "Socket
 * timed out", "Unable to contact slurm controller", PBS's "cannot connect to server") answers a little
 * later, and a launch or a job's watch that gave up at its first failure ended for nothing. Submitting
 * is never asked twice (it could queue the job twice), nor is an answer the adapter could not read,
 * nor a command that is not there.
 */
const QUERY_RETRY: RetryPolicy = { maxAttempts: 8, baseDelayMs: 1_000, maxDelayMs: 15_000, budgetMs: 60_000, refusedRetryDelayMs: 1_000, exact: true };

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
    const job = await this.ask(this.adapter.statusArgv(this.adapter.checkId(id)), (result) => this.adapter.parseStatus(result, id));
    if (job?.phase === 'queued') {
      const position = queuePosition(await this.list(job.queue), job.id);
      if (position !== undefined) job.position = position;
    }
    return job;
  }

  /** Every job the scheduler lists (of one queue, when given). */
  async list(queue?: string): Promise<JobState[]> {
    const jobs = await this.ask(this.adapter.queueArgv(queue), (result) => this.adapter.parseQueue(result));
    return queue ? jobs.filter((j) => j.queue === undefined || j.queue === queue) : jobs;
  }

  async cancel(id: string): Promise<void> {
    this.adapter.parseCancel(await this.host.run(this.adapter.cancelArgv(this.adapter.checkId(id))), id);
  }

  /** `argv`'s answer, read by `read`; asked again while the command fails (QUERY_RETRY). */
  private async ask<T>(argv: readonly string[], read: (result: CommandResult) => T): Promise<T> {
    const startedAt = performance.now();
    for (let attempt = 1; ; attempt++) {
      const result = await this.host.run(argv);
      try {
        return read(result);
      } catch (err) {
        const delay = backoffDelay(attempt, QUERY_RETRY);
        const spent = performance.now() - startedAt;
        // Answered (but not readably), or no such command (127, here or on the login): asking again changes nothing.
        if (result.code === 0 || result.code === 127 || !(err instanceof SchedulerError)) throw err;
        if (attempt >= QUERY_RETRY.maxAttempts || spent + delay > QUERY_RETRY.budgetMs) throw new SchedulerError(`${err.message} (asked ${attempt} times over ${Math.round(spent / 1000)} s)`);
        await sleep(delay);
      }
    }
  }
}

import type { CommandResult } from './host.ts';
import type { JobState, SchedulerKind } from './job.ts';

/**
 * One scheduler's command lines and how to read their answers. Pure: no process, no file; the
 * Scheduler runs the argument lists on a JobHost. Parsers throw SchedulerError with the
 * scheduler's own words when a command failed.
 */
export interface SchedulerAdapter {
  readonly kind: SchedulerKind;
  /** Checks a job id before it reaches an argument list; returns it or throws SchedulerError(refused). */
  checkId(id: string): string;
  submitArgv(scriptPath: string): string[];
  /** The new job's id. */
  parseSubmit(result: CommandResult): string;
  statusArgv(id: string): string[];
  /** Undefined when the scheduler no longer knows the job (long finished, or never was). */
  parseStatus(result: CommandResult, id: string): JobState | undefined;
  /** Every job of `queue` (all queues when undefined), for positions and listings. */
  queueArgv(queue?: string): string[];
  parseQueue(result: CommandResult): JobState[];
  cancelArgv(id: string): string[];
  /** Throws unless the job is cancelled or was already over. */
  parseCancel(result: CommandResult, id: string): void;
}

import { jobEnded, walltimeReached } from '../run/result.ts';
import { describeJob } from './job-format.ts';
import { isFinished, type JobState } from './job.ts';

/**
 * Why a run on a job's servers stops, given what the scheduler says of the job now: undefined
 * while it runs; cancelled by walltime when the walltime ended it; cancelled by job end when it
 * ended (or is ending) any other way, or its scheduler no longer knows it (`state` undefined).
 */
export function jobEndReason(jobId: string, state: JobState | undefined): string | undefined {
  if (!state) return jobEnded(jobId, 'its scheduler no longer lists it');
  if (state.phase === 'timeout') return walltimeReached(jobId);
  if (isFinished(state.phase) || state.phase === 'ending') return jobEnded(jobId, describeJob(state));
  return undefined;
}

import { walltimeEnd, type JobState } from './job.ts';
import { humanDuration } from './walltime.ts';

const clock = (d: Date) => d.toLocaleTimeString('en-GB', { hour12: false });

/** One line about a job, as a person watching the queue wants it: state, place, estimate, nodes, walltime left. */
export function describeJob(job: JobState, now = new Date()): string {
  const parts = [`${job.phase} (${job.schedulerState}${job.reason ? `, ${job.reason}` : ''})`];
  if (job.position !== undefined) parts.push(`position ${job.position} in ${job.queue ?? 'the queue'}`);
  if (job.startEstimate) parts.push(`start estimate ${clock(job.startEstimate)}`);
  if (job.nodes.length) parts.push(`on ${job.nodes.length > 4 ? `${job.nodes.slice(0, 3).join(', ')}, … (${job.nodes.length} nodes)` : job.nodes.join(', ')}`);
  const end = walltimeEnd(job);
  if (end && (job.phase === 'running' || job.phase === 'starting')) parts.push(`walltime left ${humanDuration((end.getTime() - now.getTime()) / 1000)} (ends ${clock(end)})`);
  if (job.exitCode !== undefined && job.exitCode !== 0) parts.push(`exit ${job.exitCode}`);
  return parts.join(', ');
}

import type { Run } from '../core/run/run.ts';
import { walltimeReached } from '../core/run/result.ts';
import { jobEndReason } from '../core/scheduler/job-end.ts';
import { walltimeEnd } from '../core/scheduler/job.ts';
import { walltimeStop } from '../core/scheduler/walltime.ts';
import type { Services } from './services.ts';

/**
 * A run on the launched job's servers stops at the job's walltime (a few seconds before it, when
 * the scheduler ends them): what is in flight and not sent yet ends cancelled by walltime, for
 * `--resume` on the next job, rather than failing over to servers going away and failing. It
 * stops as well when the job watch sees the job end any other way (a node lost, cancelled outside
 * the editor, failed): cancelled by job end, saying how. An endpoint of the run going down makes
 * the watch look at once, as a job ending takes its servers first.
 */
export function stopAtWalltime(services: Services, run: Run<unknown>): void {
  const jobId = services.session.connection?.source.job?.id;
  if (!jobId) return;
  const reason = walltimeReached(jobId);
  let timer: NodeJS.Timeout | undefined;
  let planned: number | undefined;
  const look = () => {
    const job = services.jobs.job;
    if (job?.record.id !== jobId) return;
    const ended = job.gone ? jobEndReason(jobId, undefined) : job.state && jobEndReason(jobId, job.state);
    if (ended) return run.cancel(ended);
    const end = job.state && walltimeEnd(job.state);
    const at = end && walltimeStop(end).getTime();
    if (!at || at === planned) return;
    planned = at;
    clearTimeout(timer);
    timer = setTimeout(() => run.cancel(reason), Math.max(0, at - Date.now()));
  };
  look();
  const watching = services.jobs.onDidChange(look);
  const onEndpoint = (e: { status: string }) => {
    if (e.status === 'down' || e.status === 'tunnel-down') services.jobs.lookNow();
  };
  run.on('endpoint', onEndpoint);
  void run.done.finally(() => {
    clearTimeout(timer);
    watching.dispose();
    run.off('endpoint', onEndpoint);
  });
}

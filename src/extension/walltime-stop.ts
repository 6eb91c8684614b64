import type { Run } from '../core/run/run.ts';
import { walltimeReached } from '../core/run/result.ts';
import { walltimeEnd } from '../core/scheduler/job.ts';
import { walltimeStop } from '../core/scheduler/walltime.ts';
import type { Services } from './services.ts';

/**
 * A run on the launched job's servers stops at the job's walltime (a few seconds before it, when
 * the scheduler ends them): what is in flight and not sent yet ends cancelled by walltime, for
 * `--resume` on the next job, rather than failing over to servers going away and failing. It
 * stops too if the job watch sees the job end by its walltime first.
 */
export function stopAtWalltime(services: Services, run: Run<unknown>): void {
  const jobId = services.session.connection?.source.job?.id;
  if (!jobId) return;
  const reason = walltimeReached(jobId);
  let timer: NodeJS.Timeout | undefined;
  let planned: number | undefined;
  const look = () => {
    const job = services.jobs.job;
    if (job?.record.id !== jobId || !job.state) return;
    if (job.state.phase === 'timeout') return run.cancel(reason);
    const end = walltimeEnd(job.state);
    const at = end && walltimeStop(end).getTime();
    if (!at || at === planned) return;
    planned = at;
    clearTimeout(timer);
    timer = setTimeout(() => run.cancel(reason), Math.max(0, at - Date.now()));
  };
  look();
  const watching = services.jobs.onDidChange(look);
  void run.done.finally(() => {
    clearTimeout(timer);
    watching.dispose();
  });
}

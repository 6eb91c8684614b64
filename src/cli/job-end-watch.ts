import type { Run } from '../core/index.ts';
import { printable } from './format.ts';

/** Between looks at the job's scheduler while its servers answer; while some are down, more often (a job ending takes them all). */
const JOB_LOOK_MS = 30_000;
const JOB_LOOK_DOWN_MS = 2_000;

/**
 * Looks at the job while the run goes (every JOB_LOOK_MS, at once when an endpoint goes down, then
 * every JOB_LOOK_DOWN_MS while any is down) and cancels the run with the scheduler's reason once
 * the job has ended. A look that fails (the login dropped) is tried again at the next one.
 * Returns what stops the watch.
 */
export function watchJobEnd(run: Run<unknown>, check: () => Promise<string | undefined>): () => void {
  const down = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let looking = false;
  let over = false;
  let warned = false;
  const look = async () => {
    if (looking || over) return;
    looking = true;
    clearTimeout(timer);
    const reason = await check().catch((err: unknown) => {
      // Said once: a job ending early would then show as failures, not as cancelled by job end.
      if (!warned) process.stderr.write(`\nwarning: cannot ask the job's scheduler whether it still runs (${printable((err as Error).message.split('\n')[0] ?? '')}); asking again every ${JOB_LOOK_MS / 1000} s\n`);
      warned = true;
      return undefined;
    });
    looking = false;
    if (over || run.cancelled) return;
    if (reason) {
      process.stderr.write(`\n${reason}: the requests in flight and the prompts not sent are cancelled\n`);
      return run.cancel(reason);
    }
    timer = setTimeout(() => void look(), down.size ? JOB_LOOK_DOWN_MS : JOB_LOOK_MS);
  };
  run.on('endpoint', (e) => {
    if (e.status === 'down' || e.status === 'tunnel-down') {
      const first = down.size === 0;
      down.add(e.endpoint);
      if (first) void look();
    } else if (e.status === 'up') down.delete(e.endpoint);
  });
  timer = setTimeout(() => void look(), JOB_LOOK_MS);
  return () => {
    over = true;
    clearTimeout(timer);
  };
}


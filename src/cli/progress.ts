import cliProgress from 'cli-progress';
import type { Run, RunReport } from '../core/index.ts';
import { DRAIN_SIGNAL, registerRun } from './active-runs.ts';
import { formatSummary, printable } from './format.ts';
import { watchJobEnd } from './job-end-watch.ts';
import { stoppingLine, type Stop } from './interrupt.ts';
import { reportRun } from './run-status.ts';

const int = (n: number) => n.toLocaleString('en-US');
/** Lines of each kind (endpoints down, warnings) shown before the rest become a count. */
const LISTED = 20;

/**
 * Shows a run on stderr: a live bar on a terminal (throttled by cli-progress) unless `bar` is
 * off, and warnings and endpoints going down as lines always. Returns a function that stops the bar.
 */
export function showProgress(run: Run<unknown>, label: string, bar: boolean): () => void {
  const log = (line: string) => (bars ? bars.log(`${printable(line)}\n`) : process.stderr.write(`${printable(line)}\n`));
  const bars = bar && process.stderr.isTTY
    ? new cliProgress.MultiBar(
        {
          stream: process.stderr,
          // Fits 80 columns up to 100,000 prompts (cli-progress cuts what does not fit); ok = done − failed.
          format: `${label} [{bar}] {value}/{total} · {failed} failed · {secs} s`,
          barsize: 20,
          hideCursor: true,
          fps: 10,
          formatValue: (v, _o, type) => (type === 'value' || type === 'total' ? int(Number(v)) : String(v)),
        },
        cliProgress.Presets.shades_classic,
      )
    : null;
  // Made at the first progress, when the total is known: no `0/0` frame.
  let line: cliProgress.SingleBar | undefined;
  // Only a bar listens: a run with no progress listener builds no progress object per result.
  if (bars) run.on('progress', (p) => {
    line ??= bars.create(p.total, 0, {});
    line.setTotal(p.total);
    line.update(p.done, { failed: int(p.failed), secs: (p.elapsedMs / 1000).toFixed(1) });
  });
  // A thousand endpoints going down (a job ending), or a warning each, make a count, not a thousand lines.
  let warnings = 0;
  run.on('warning', (w) => {
    if (++warnings <= LISTED) log(`warning: ${w}`);
  });
  let down = 0;
  run.on('endpoint', (e) => {
    if ((e.status === 'down' || e.status === 'degraded') && ++down <= LISTED) log(`endpoint ${e.endpoint} ${e.status}: ${e.reason ?? 'unreachable'}`);
  });
  return () => {
    bars?.stop();
    if (warnings > LISTED) process.stderr.write(`… and ${int(warnings - LISTED)} more warnings\n`);
    if (down > LISTED) process.stderr.write(`… and ${int(down - LISTED)} more endpoints went down or were benched\n`);
  };
}

export interface WatchOptions {
  /** The hostfile the run is on, for `swarm drain --job`. */
  hostfile?: string;
  /** Drain by itself at this time (a job's walltime about to end), saying why. */
  drainAt?: { at: Date; why: string };
  /** Stop at this time (the job's walltime reached): what is in flight and unsent ends cancelled with `reason`. */
  stopAt?: { at: Date; reason: string };
  /** Asks the job's scheduler whether the job ended: why the run stops then (cancelled by job end), or undefined. */
  jobEnd?: () => Promise<string | undefined>;
}

/** setTimeout's longest delay; a later drain time is past any walltime a scheduler grants. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Runs `run` in the terminal: progress and warnings on stderr, a stop (Ctrl-C, stdout closed)
 * cancels it keeping finished results, the summary at the end unless quiet. SIGUSR2 (`swarm drain`)
 * or `drainAt` drains it: what is in flight finishes, nothing new is sent. On a launched job's
 * servers, `stopAt` (its walltime) and `jobEnd` (an early end) stop it (see job-run.ts).
 */
export async function watchRun<T>(run: Run<T>, label: string, quiet: boolean, stop: Stop, options: WatchOptions = {}): Promise<RunReport<T>> {
  const stopBar = showProgress(run as Run<unknown>, label, !quiet);
  reportRun(run as Run<unknown>);
  const cancel = () => {
    if (stop.reason() === 'interrupt') process.stderr.write(`\n${stoppingLine(stop)}\n`);
    run.cancel();
  };
  const drain = (why: string) => {
    if (run.drained || run.cancelled) return;
    process.stderr.write(`\ndraining (${why}): the requests in flight finish, nothing new is sent; the prompts not sent are kept as cancelled for --resume\n`);
    run.drain();
  };
  const onDrainSignal = () => drain(`${DRAIN_SIGNAL}, swarm drain`);
  // The handler first: a drain signal before it would end the process (SIGUSR2's default).
  process.on(DRAIN_SIGNAL, onDrainSignal);
  const unregister = registerRun(options.hostfile);
  const delay = options.drainAt ? options.drainAt.at.getTime() - Date.now() : Infinity;
  const timer = delay <= LONGEST_TIMER_MS ? setTimeout(() => drain(options.drainAt!.why), Math.max(0, delay)) : undefined;
  const stopDelay = options.stopAt ? options.stopAt.at.getTime() - Date.now() : Infinity;
  const walltime =
    stopDelay <= LONGEST_TIMER_MS
      ? setTimeout(() => {
          if (run.cancelled) return;
          process.stderr.write(`\n${options.stopAt!.reason}: the requests in flight and the prompts not sent are cancelled\n`);
          run.cancel(options.stopAt!.reason);
        }, Math.max(0, stopDelay))
      : undefined;
  const stopJobWatch = options.jobEnd ? watchJobEnd(run as Run<unknown>, options.jobEnd) : () => {};
  if (stop.signal.aborted) cancel();
  else stop.signal.addEventListener('abort', cancel, { once: true });
  const report = await run.done;
  stop.signal.removeEventListener('abort', cancel);
  clearTimeout(timer);
  clearTimeout(walltime);
  stopJobWatch();
  unregister();
  process.off(DRAIN_SIGNAL, onDrainSignal);
  stopBar();
  if (!quiet) process.stderr.write(`${formatSummary(report.summary, report.results)}\n`);
  return report;
}

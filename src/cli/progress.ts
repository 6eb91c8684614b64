import cliProgress from 'cli-progress';
import type { Run, RunReport } from '../core/index.ts';
import { formatSummary, printable } from './format.ts';
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

/**
 * Runs `run` in the terminal: progress and warnings on stderr, a stop (Ctrl-C, stdout closed)
 * cancels it keeping finished results, the summary at the end unless quiet.
 */
export async function watchRun<T>(run: Run<T>, label: string, quiet: boolean, stop: Stop): Promise<RunReport<T>> {
  const stopBar = showProgress(run as Run<unknown>, label, !quiet);
  reportRun(run as Run<unknown>);
  const cancel = () => {
    if (stop.reason() === 'interrupt') process.stderr.write(`\n${stoppingLine(stop)}\n`);
    run.cancel();
  };
  if (stop.signal.aborted) cancel();
  else stop.signal.addEventListener('abort', cancel, { once: true });
  const report = await run.done;
  stop.signal.removeEventListener('abort', cancel);
  stopBar();
  if (!quiet) process.stderr.write(`${formatSummary(report.summary, report.results)}\n`);
  return report;
}

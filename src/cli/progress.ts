import cliProgress from 'cli-progress';
import type { Run, RunReport } from '../core/index.ts';
import { formatSummary } from './format.ts';
import { onInterrupt } from './interrupt.ts';

/**
 * Shows a run on stderr: a live bar on a terminal (throttled by cli-progress) unless `bar` is
 * off, and warnings and endpoints going down as lines always. Returns a function that stops the bar.
 */
export function showProgress(run: Run<unknown>, label: string, bar: boolean): () => void {
  const log = (line: string) => (bars ? bars.log(`${line}\n`) : process.stderr.write(`${line}\n`));
  const bars = bar && process.stderr.isTTY
    ? new cliProgress.MultiBar(
        {
          stream: process.stderr,
          format: `${label} [{bar}] {value}/{total} · ok {ok} · failed {failed} · {secs} s`,
          hideCursor: true,
          fps: 10,
          formatValue: (v, _o, type) => (type === 'value' || type === 'total' ? Number(v).toLocaleString('en-US') : String(v)),
        },
        cliProgress.Presets.shades_classic,
      )
    : null;
  const line = bars?.create(0, 0, { ok: 0, failed: 0, secs: '0.0' });
  run.on('progress', (p) => {
    line?.setTotal(p.total);
    line?.update(p.done, { ok: p.ok, failed: p.failed, secs: (p.elapsedMs / 1000).toFixed(1) });
  });
  run.on('warning', (w) => log(`warning: ${w}`));
  run.on('endpoint', (e) => {
    if (e.status === 'down' || e.status === 'degraded') log(`endpoint ${e.endpoint} ${e.status}: ${e.reason ?? 'unreachable'}`);
  });
  return () => bars?.stop();
}

/**
 * Runs `run` in the terminal: progress and warnings on stderr, Ctrl-C cancels (keeping finished
 * results), the summary at the end unless quiet.
 */
export async function watchRun<T>(run: Run<T>, label: string, quiet: boolean): Promise<{ report: RunReport<T>; interrupted: boolean }> {
  const stopBar = showProgress(run as Run<unknown>, label, !quiet);
  const interrupt = onInterrupt(() => run.cancel());
  const report = await run.done;
  stopBar();
  interrupt.dispose();
  if (!quiet) process.stderr.write(`${formatSummary(report.summary)}\n`);
  return { report, interrupted: interrupt.interrupted() };
}

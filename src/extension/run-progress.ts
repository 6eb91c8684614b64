import * as vscode from 'vscode';
import type { Run, RunReport } from '../core/index.ts';
import type { Services } from './services.ts';

/** Feeds the status bar with a run and logs every failed prompt and every warning. */
export function watchRun<T>(services: Services, run: Run<T>, title: string): Run<T> {
  services.runs.track(run, title);
  run.on('warning', (w) => services.log.warn(w));
  run.on('endpoint', (e) => e.status !== 'up' && e.status !== 'unknown' && services.log.warn(`${e.endpoint} ${e.status}: ${e.reason ?? ''}`));
  run.on('result', (r) => r.status === 'failed' && services.log.error(`prompt #${r.index} on ${r.endpoint ?? '(no endpoint)'}: ${r.error}`));
  return run;
}

/**
 * Shows a run as a cancellable notification with per-prompt increments (throttled), logs every
 * failed prompt and every warning, and feeds the status bar. Cancel keeps what finished.
 */
export function withRunProgress<T>(services: Services, run: Run<T>, title: string): Thenable<RunReport<T>> {
  watchRun(services, run, title);
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (progress, token) => {
    token.onCancellationRequested(() => run.cancel());
    // At most ten updates a second, the latest always shown (a trailing update follows every
    // burst), and once a second regardless, so the clock moves while a slow request is pending.
    const startedAt = Date.now();
    let reported = 0;
    let latest = run.progress;
    let timer: NodeJS.Timeout | undefined;
    const report = () => {
      timer = undefined;
      const p = latest;
      const share = p.total ? (p.done / p.total) * 100 : 0;
      progress.report({ increment: share - reported, message: `${p.done.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')} · ${p.failed} failed · ${((Date.now() - startedAt) / 1000).toFixed(1)} s` });
      reported = share;
    };
    run.on('progress', (p) => {
      latest = p;
      timer ??= setTimeout(report, 100);
    });
    const clock = setInterval(report, 1000);
    return run.done.finally(() => {
      clearTimeout(timer);
      clearInterval(clock);
    });
  });
}

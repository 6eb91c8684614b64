import * as vscode from 'vscode';
import type { Run, RunReport } from '../core/index.ts';
import type { Services } from './services.ts';
import { STATUS_LABELS } from '../core/endpoints/endpoint-status.ts';
import { throttle } from '../core/run/throttle.ts';
import { stopAtWalltime } from './walltime-stop.ts';

/**
 * Feeds the status bar with a run and logs every failed prompt and every warning, each line naming
 * the run. `total`: the prompts known at launch (the core may count some only once they exist).
 */
export function watchRun<T>(services: Services, run: Run<T>, title: string, total = 0): Run<T> {
  services.runs.track(run, title, total);
  stopAtWalltime(services, run as Run<unknown>);
  const tag = `[${title}]`;
  run.on('warning', (w) => services.log.warn(`${tag} ${w}`));
  run.on('endpoint', (e) => e.status !== 'up' && e.status !== 'unknown' && services.log.warn(`${tag} ${e.endpoint} ${STATUS_LABELS[e.status]}: ${e.reason ?? ''}`));
  run.on('result', (r) => r.status === 'failed' && services.log.error(`${tag} prompt #${r.index} on ${r.endpoint ?? '(no endpoint)'}: ${r.error}`));
  return run;
}

/**
 * Shows a run as a cancellable notification with per-prompt increments (throttled), logs every
 * failed prompt and every warning, and feeds the status bar. Cancel keeps what finished.
 */
export function withRunProgress<T>(services: Services, run: Run<T>, title: string, total = 0): Thenable<RunReport<T>> {
  watchRun(services, run, title, total);
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (progress, token) => {
    token.onCancellationRequested(() => run.cancel());
    // At most two updates a second, the latest always shown, and once a second regardless, so the
    // clock moves while a slow request is pending. The total is known from the start. (Ten a second
    // redrew the notification on the workbench's thread, which the panel's webview shares: seconds
    // of a 10,000-prompt run.)
    const startedAt = Date.now();
    let reported = 0;
    const report = () => {
      const p = run.progress;
      const of = Math.max(p.total, total);
      const share = of ? (p.done / of) * 100 : 0;
      progress.report({ increment: share - reported, message: `${p.done.toLocaleString('en-US')}/${of.toLocaleString('en-US')} · ${p.failed} failed · ${((Date.now() - startedAt) / 1000).toFixed(1)} s` });
      reported = share;
    };
    const paced = throttle(report, 500);
    run.on('progress', () => paced.call());
    report();
    const clock = setInterval(report, 1000);
    return run.done.finally(() => {
      paced.cancel();
      clearInterval(clock);
    });
  });
}

import * as vscode from 'vscode';
import { humanDuration } from '../core/scheduler/walltime.ts';
import { summaryRows } from '../core/run/summary.ts';
import type { SwarmConnection } from './connection.ts';
import { STATUS_LABELS } from '../core/endpoints/endpoint-status.ts';
import { describeJob } from '../core/scheduler/job-format.ts';
import { jobPhrase, type JobWatch } from './job-watch.ts';
import type { RunTracker } from './run-tracker.ts';

/**
 * `Swarm 18/20` when idle (tooltip: the endpoints not healthy); `Swarm 3,412/10,000 · 12.4 s` during
 * a run (click to cancel); the last run's wall time after it (the figures and comparison on hover),
 * with a mark when it failed or was cancelled until the next run or a click.
 */
export class SwarmStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('swarmLab.status', vscode.StatusBarAlignment.Left, 50);
  private connection: SwarmConnection | undefined;
  private subscriptions: vscode.Disposable[] = [];
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly runs: RunTracker,
    private readonly jobs: JobWatch,
  ) {
    this.item.name = 'Swarm Lab';
    runs.onDidChange(() => this.render());
    jobs.onDidChange(() => this.render());
    this.render();
  }

  show(connection: SwarmConnection | undefined): void {
    for (const s of this.subscriptions) s.dispose();
    if (connection !== this.connection) this.runs.forgetFinished();
    this.connection = connection;
    this.subscriptions = connection ? [connection.onDidChange(() => this.render())] : [];
    this.render();
  }

  /** What the item shows now (tests read it through the extension's API). */
  get state(): { text: string; tooltip: string; command: string | undefined } {
    const tooltip = this.item.tooltip;
    return {
      text: this.item.text,
      tooltip: typeof tooltip === 'string' ? tooltip : (tooltip?.value ?? ''),
      command: typeof this.item.command === 'string' ? this.item.command : this.item.command?.command,
    };
  }

  private render(): void {
    const running = this.runs.running;
    clearInterval(this.ticker);
    this.ticker = undefined;
    if (running) {
      const p = running.progress;
      const seconds = (Date.now() - running.startedAt) / 1000;
      const total = Math.max(p.total, running.total);
      const left = this.jobs.job ? this.jobs.walltimeLeft() : undefined;
      const draining = this.runs.draining ? ' · draining' : '';
      this.item.text = `$(sync~spin) Swarm ${p.done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} · ${seconds.toFixed(1)} s${draining}${left !== undefined ? ` · ${humanDuration(left)} left` : ''}`;
      this.item.tooltip = `${running.label}: ${p.ok} ok, ${p.failed} failed. Click to cancel (finished results are kept).${this.jobs.job ? `\n${jobPhrase(this.jobs.job, left)}` : ''}`;
      this.item.command = 'swarmLab.cancelRun';
      this.item.show();
      this.ticker = setInterval(() => this.render(), 1000); // the clock moves even while no result comes
      return;
    }
    const c = this.connection;
    const job = this.jobs.job;
    const jobText = job ? ` · ${jobPhrase(job, this.jobs.walltimeLeft())}` : '';
    if (!c) {
      if (!job) return this.item.hide();
      // Launched, not connected yet: the queue is what there is to watch.
      this.item.text = `$(server-process) Swarm${jobText}`;
      this.item.tooltip = job.state ? `Job ${job.record.id}: ${describeJob(job.state)}` : `Job ${job.record.id}: submitted`;
      this.item.command = 'swarmLab.showSwarm';
      this.item.show();
      return;
    }
    const finished = this.runs.finished;
    const total = c.snapshot.length;
    // A run that failed or was cancelled says so until the next one, or until clicked.
    const mark = !finished || finished.seen ? '' : finished.cancelled || finished.drained ? ' $(circle-slash)' : finished.error || finished.summary.failed ? ' $(error)' : '';
    const reconnecting = c.tunnel && c.snapshot.some((v) => v.status === 'tunnel-down') ? ' $(sync~spin) reconnecting…' : '';
    this.item.text = `$(server-environment) Swarm ${c.healthy}/${total}${reconnecting}${finished ? ` · ${(finished.summary.wallMs / 1000).toFixed(2)} s${mark}` : ''}${jobText}`;
    // A plain-text tooltip: what a screen reader reads out, without markdown escapes.
    const lines = [`${c.source.label}: ${c.healthy} of ${total} endpoints healthy`];
    if (job?.state) lines.push(`Job ${job.record.id}: ${describeJob(job.state)}`);
    const notHealthy = c.snapshot.filter((v) => v.status !== 'up');
    if (notHealthy.length) lines.push(`Not healthy: ${notHealthy.slice(0, 10).map((v) => `${v.id} (${STATUS_LABELS[v.status]})`).join(', ')}${notHealthy.length > 10 ? ', …' : ''}`);
    if (finished) {
      const ended = finished.cancelled ? ' (cancelled)' : finished.drained ? ` (drained: ${finished.summary.cancelled} prompts not sent)` : finished.error ? ` (failed: ${finished.error})` : finished.summary.failed ? ` (${finished.summary.failed} prompts failed)` : '';
      lines.push('', `Last run, ${finished.label}${ended}:`, ...summaryRows(finished.summary).map(([k, v]) => `  ${k}: ${v}`));
      if (finished.comparison) lines.push('', finished.comparison);
    }
    this.item.tooltip = lines.join('\n');
    this.item.command = 'swarmLab.showSwarm';
    this.item.show();
  }

  dispose(): void {
    clearInterval(this.ticker);
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}

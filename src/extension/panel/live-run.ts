import type { Run, RunReport } from '../../core/index.ts';
import type { HostMessage, ReduceView, ResultRow } from '../../panel/protocol.ts';

type Started = Extract<HostMessage, { type: 'runStarted' }>;

/** At most this many progress messages a second reach the webview, however fast results come. */
export const PROGRESS_PER_SECOND = 5;

/** The webview's one budget of progress messages, shared by every run going at once. */
export class ProgressPace {
  readonly intervalMs = 1000 / PROGRESS_PER_SECOND;
  last = -Infinity;

  /** ms until the next progress message may go. */
  wait(): number {
    return Math.max(0, this.last + this.intervalMs - performance.now());
  }
}

/**
 * One run as the panel sees it: `runStarted`, then throttled `runProgress` messages each carrying the
 * rows that arrived since the previous one (never one message per result), then `runFinished`. Keeps
 * every row so a webview that comes back mid-run (shown again, reloaded) gets the whole run at once.
 */
export class LiveRun {
  readonly rows: ResultRow[] = [];
  private pending: ResultRow[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly started: Started,
    private readonly run: Run<unknown>,
    private readonly post: (message: HostMessage) => boolean,
    private readonly pace: ProgressPace,
  ) {
    post(started);
  }

  /** A result of the run, as its row (call from the run's 'result' listener). */
  add(row: ResultRow): void {
    this.rows.push(row);
    this.pending.push(row);
    this.schedule();
  }

  get runId(): string {
    return this.started.runId;
  }

  /** Everything so far, for a webview that just said `ready`. */
  resync(): void {
    this.pending = [];
    if (this.post(this.started)) this.flush([...this.rows]);
  }

  /** Sends the last rows (keeping the pace) and then `runFinished`; says whether the webview got it. */
  async finish(report: RunReport<unknown>, reduce?: ReduceView): Promise<boolean> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.pending.length) {
      await new Promise((r) => setTimeout(r, this.pace.wait()));
      if (!this.pace.wait()) this.flush(this.pending.splice(0));
    }
    return this.post({
      type: 'runFinished',
      runId: this.runId,
      summary: report.summary,
      error: report.error,
      cancelled: report.cancelled,
      ...(reduce ? { reduce } : {}),
    });
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.pending.length) return;
      if (this.pace.wait()) return this.schedule(); // another run took the slot
      this.flush(this.pending.splice(0));
    }, this.pace.wait());
  }

  private flush(results: ResultRow[]): void {
    this.pace.last = performance.now();
    const p = this.run.progress;
    this.post({ type: 'runProgress', runId: this.runId, done: p.done, ok: p.ok, failed: p.failed, total: p.total, elapsedMs: p.elapsedMs, results });
  }
}

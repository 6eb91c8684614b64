import * as vscode from 'vscode';
import type { Run, RunProgress, RunSummary } from '../core/index.ts';
import { throttle } from '../core/run/throttle.ts';

/** How the last run ended; `seen` once the user clicked its mark away. */
export interface FinishedRun {
  label: string;
  summary: RunSummary;
  error: string | null;
  cancelled: boolean;
  /** Drained: its unsent prompts are cancelled, to resume on the next swarm. */
  drained: boolean;
  seen: boolean;
  comparison?: string;
}

/** The run in progress (at most one shown at a time) and the last one finished, for the status bar and Cancel. */
export class RunTracker implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private current: { run: Run<unknown>; label: string; progress: RunProgress; startedAt: number; total: number } | undefined;
  private last: FinishedRun | undefined;

  /** The run going; `total` is the prompts known at launch (the core's count may lag it). */
  get running(): { label: string; progress: RunProgress; startedAt: number; total: number } | undefined {
    return this.current;
  }

  /** A new swarm: the last run's figures belonged to the old one. */
  forgetFinished(): void {
    this.last = undefined;
    this.changed.fire();
  }

  get finished(): FinishedRun | undefined {
    return this.last;
  }

  /** The user looked at how the last run ended (clicked the status bar): its mark may go. */
  acknowledge(): void {
    if (!this.last || this.last.seen) return;
    this.last.seen = true;
    this.changed.fire();
  }

  /** Follows a run until it is done; progress updates are throttled to a few a second. */
  track<T>(run: Run<T>, label: string, total = 0): Run<T> {
    const entry = { run: run as Run<unknown>, label, progress: run.progress, startedAt: Date.now(), total };
    this.current = entry;
    const paced = throttle(() => this.current === entry && this.changed.fire(), 200);
    run.on('progress', (p) => {
      entry.progress = p;
      paced.call();
    });
    void vscode.commands.executeCommand('setContext', 'swarmLab.running', true);
    this.changed.fire();
    void run.done.then((report) => {
      paced.cancel();
      if (this.current === entry) this.current = undefined;
      this.last = { label, summary: report.summary, error: report.error, cancelled: report.cancelled, drained: report.drained, seen: false };
      void vscode.commands.executeCommand('setContext', 'swarmLab.running', Boolean(this.current));
      this.changed.fire();
    });
    return run;
  }

  /** Adds a batched-vs-individual comparison to the last finished run (shown on hover). */
  setComparison(text: string): void {
    if (this.last) this.last.comparison = text;
    this.changed.fire();
  }

  /** Drains the run going: what is in flight finishes, nothing new is sent (false: none is going). */
  drain(): boolean {
    if (!this.current) return false;
    this.current.run.drain();
    this.changed.fire();
    return true;
  }

  /** Whether the run going was drained (it ends once its requests in flight are through). */
  get draining(): boolean {
    return Boolean(this.current?.run.drained);
  }

  cancel(): boolean {
    if (!this.current) return false;
    this.current.run.cancel();
    return true;
  }

  dispose(): void {
    this.current?.run.cancel();
    this.changed.dispose();
  }
}

import * as vscode from 'vscode';
import { isFinished, walltimeEnd, type JobState } from '../core/scheduler/job.ts';
import { describeJob } from '../core/scheduler/job-format.ts';
import type { JobRecord } from '../core/scheduler/records.ts';
import type { Scheduler } from '../core/scheduler/scheduler.ts';
import { humanDuration } from '../core/scheduler/walltime.ts';

/** The workspace's remembered jobs (their names under .swarm/jobs), re-attached after a restart. */
const REMEMBERED = 'swarmLab.launchedJobs';
/** …and those already warned of their walltime: a reloaded window does not warn again. */
const WARNED = 'swarmLab.warnedJobs';

/** What the job's commands ride on (the window's SSH login), let go of when the job is no longer followed. */
interface Held {
  close(): Promise<void>;
}

/** The job this window follows: its record, and what its scheduler said last. */
export interface WatchedJob {
  record: JobRecord;
  state: JobState | undefined;
  /** The last look at the scheduler failed (the SSH login dropped…): why. */
  error: string | null;
  /** The scheduler no longer knows it (long finished). */
  gone: boolean;
}

/**
 * The launched job this window follows (at most one): its state from the scheduler every poll, for
 * the Endpoints view and the status bar; one warning before its walltime ends, offering Drain and
 * Cancel. Jobs are remembered in the workspace state until they end, so a reloaded window attaches
 * again. The scheduler is handed in by the launch code (loaded on demand): this file runs no command.
 */
export class JobWatch implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private current: (WatchedJob & { scheduler: Scheduler; warned: boolean; login: Held | undefined }) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private warnBefore: () => number = () => 0;

  constructor(private readonly memento: vscode.Memento) {}

  get job(): WatchedJob | undefined {
    return this.current;
  }

  /** Seconds of walltime left (undefined until the job runs with a known limit). */
  walltimeLeft(now = Date.now()): number | undefined {
    const end = this.current?.state && walltimeEnd(this.current.state);
    return end ? (end.getTime() - now) / 1000 : undefined;
  }

  /** Whether the job is still queued or running (not ended, not forgotten by its scheduler). */
  get live(): boolean {
    const j = this.current;
    return Boolean(j && !j.gone && !(j.state && isFinished(j.state.phase)));
  }

  /** Names of the jobs launched in this workspace and not seen ended. */
  remembered(): string[] {
    return this.memento.get<string[]>(REMEMBERED, []);
  }

  async remember(record: JobRecord): Promise<void> {
    await this.memento.update(REMEMBERED, [...this.remembered().filter((n) => n !== record.name), record.name]);
  }

  async forget(name: string): Promise<void> {
    await this.memento.update(REMEMBERED, this.remembered().filter((n) => n !== name));
    await this.memento.update(WARNED, this.memento.get<string[]>(WARNED, []).filter((n) => n !== name));
  }

  /**
   * Follows `record`'s job from now on (one at a time); `state` is what its scheduler said last, if
   * known. `login` is the handle of the login its scheduler rides: held until the job ends or is no
   * longer followed, so closing a connection on the same login leaves the job's polling working.
   */
  attach(record: JobRecord, scheduler: Scheduler, state?: JobState, login?: Held): void {
    this.detach();
    this.current = { record, scheduler, state, error: null, gone: false, warned: this.memento.get<string[]>(WARNED, []).includes(record.name), login };
    this.announce();
  }

  /** The job followed is ready: its record now says so (nodes, end of walltime). */
  ready(record: JobRecord, state: JobState): void {
    if (this.current?.record.name !== record.name) return;
    this.current.record = record;
    this.current.state = state;
    this.announce();
  }

  /** What the launcher learned on its own look (while it waits for the servers, it is the one asking). */
  update(state: JobState): void {
    if (!this.current || this.current.record.id !== state.id) return;
    this.current.state = state;
    this.current.error = null;
    this.announce();
  }

  /** Asks the scheduler every `seconds`; once right away. `warnBefore` is read at each look (a setting). */
  startPolling(seconds: number, warnBefore: () => number): void {
    clearInterval(this.timer);
    this.warnBefore = warnBefore;
    const tick = () => this.lookNow();
    tick();
    this.timer = setInterval(tick, seconds * 1000);
  }

  /** A look at the job now unless one is under way (a run on its servers saw one go down: has the job ended?). */
  lookNow(): void {
    if (this.timer) this.polling ??= this.poll(this.warnBefore()).finally(() => (this.polling = undefined));
  }

  /** One look at the job now (tests and the commands call it to see a change at once). */
  async refresh(warnBeforeMinutes: number): Promise<void> {
    await this.polling;
    await this.poll(warnBeforeMinutes);
  }

  private async poll(warnBeforeMinutes: number): Promise<void> {
    const job = this.current;
    if (!job) return;
    const wasLive = this.live;
    try {
      const state = await job.scheduler.status(job.record.id);
      if (this.current !== job) return;
      job.error = null;
      if (!state) job.gone = true;
      else job.state = state;
    } catch (err) {
      if (this.current === job) job.error = (err as Error).message;
    }
    if (this.current !== job) return;
    if (!this.live) {
      clearInterval(this.timer);
      this.letGo(job);
      await this.forget(job.record.name);
      // Ended by the scheduler (walltime, a node lost, the servers failing), not by Cancel Job: said once.
      if (wasLive && job.state?.phase !== 'cancelled') void vscode.window.showWarningMessage(`Swarm: job ${job.record.id} ended: ${job.state ? describeJob(job.state) : 'its scheduler no longer knows it'}.`);
    } else this.warnIfDue(job, warnBeforeMinutes);
    this.announce();
  }

  /** Once per job, when its walltime left falls to the warning: Drain (the run) or Cancel (the job). */
  private warnIfDue(job: WatchedJob & { warned: boolean }, warnBeforeMinutes: number): void {
    const left = this.walltimeLeft();
    if (job.warned || left === undefined || left > warnBeforeMinutes * 60) return;
    job.warned = true;
    void this.memento.update(WARNED, [...this.memento.get<string[]>(WARNED, []), job.record.name]);
    const id = job.record.id;
    void vscode.window
      .showWarningMessage(
        `Swarm: job ${id} reaches its walltime in ${humanDuration(left)}. Drain the run now (what is in flight finishes, nothing new is sent; the rest resumes on the next job), or cancel the job.`,
        'Drain Run',
        'Cancel Job',
      )
      .then((pick) => {
        if (pick === 'Drain Run') void vscode.commands.executeCommand('swarmLab.drainRun');
        // Picked on the warning itself: no second question.
        if (pick === 'Cancel Job') void vscode.commands.executeCommand('swarmLab.cancelJob', { confirmed: true });
      });
  }

  /** Stops following (the job itself goes on). */
  detach(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (!this.current) return;
    this.letGo(this.current);
    this.current = undefined;
    this.announce();
  }

  /** The job's login is not needed any more by the watch (other users of it keep it). */
  private letGo(job: { login: Held | undefined }): void {
    void job.login?.close().catch(() => undefined);
    job.login = undefined;
  }

  /** The scheduler of the job followed, for Cancel. */
  get scheduler(): Scheduler | undefined {
    return this.current?.scheduler;
  }

  private announce(): void {
    void vscode.commands.executeCommand('setContext', 'swarmLab.jobLive', this.live);
    this.changed.fire();
  }

  dispose(): void {
    clearInterval(this.timer);
    if (this.current) this.letGo(this.current);
    this.changed.dispose();
  }
}

/** `job 12 running · 4 min 10 s left`, `job 12 queued · #1 in debug`: short, for the status bar and the Endpoints view. */
export function jobPhrase(job: WatchedJob, left: number | undefined): string {
  const s = job.state;
  const phase = job.gone ? 'gone' : (s?.phase ?? 'submitted');
  const parts = [`job ${job.record.id} ${phase}`];
  if (s?.phase === 'queued' && s.position !== undefined) parts.push(`#${s.position} in ${s.queue ?? 'the queue'}`);
  if (s && (s.phase === 'running' || s.phase === 'starting') && left !== undefined) parts.push(`${humanDuration(left)} left`);
  if (job.error) parts.push('(not reachable)');
  return parts.join(' · ');
}

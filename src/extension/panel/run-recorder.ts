import { OrderedJsonlWriter, watchServerLoad, type Run, type ServerLoadWatch, type SwarmPool } from '../../core/index.ts';
import type { ArmRound, HostMessage, ResultRow, RunMessage } from '../../panel/protocol.ts';
import type { Continuation } from './run-continuation.ts';
import { armShown, type RunHistory, type SavedRun } from './run-history.ts';
import { LiveRows } from './live-rows.ts';

type Started = Extract<RunMessage, { type: 'runStarted' }>;
type Finished = Extract<RunMessage, { type: 'runFinished' }>;

/**
 * One run as the host records it and tells the panel, the same for a single run and a comparison:
 * `runStarted`; per followed Run (the run, or each arm) its rows to a results file and to the panel;
 * `armStarted` / `armFinished` around a comparison's arms; `runFinished` as soon as the rows and
 * figures are known; then the record saved and the history list that names it (the lifecycle in
 * protocol.ts). Keeps what it said, so a webview that comes back mid-run hears the run from its start.
 */
export class RunRecorder {
  private readonly said: HostMessage[] = [];
  private live: LiveRows | undefined;
  private writer: OrderedJsonlWriter | undefined;
  private servers: ServerLoadWatch | undefined;
  private finished: Finished | undefined;
  /** When the Run followed last settled (the host's clock), said with `runFinished`. */
  private endedAt: number | undefined;

  constructor(
    readonly started: Started,
    private readonly history: RunHistory,
    private readonly post: (message: HostMessage) => boolean,
    /** A continued run: its prompt i is the run's prompt todo[i], written after the kept rows. */
    private readonly continued?: Continuation,
  ) {
    this.say(started);
  }

  get runId(): string {
    return this.started.runId;
  }

  /** The rows of the Run followed last, in input order. */
  get rows(): ResultRow[] {
    return [...(this.live?.rows ?? [])].sort((a, b) => a.index - b.index);
  }

  /** Follows `run` (the whole run, or one arm): each result, with its prompt, to `file` (when given) and to the panel. */
  follow(run: Run<unknown>, file?: string, arm?: { arm: ArmRound['arm']; round: number }): void {
    if (arm) this.say({ type: 'armStarted', runId: this.runId, ...arm });
    const c = this.continued;
    const live = new LiveRows(this.runId, run, this.started.total, this.post, c?.kept, this.started.prompts);
    const writer = file ? new OrderedJsonlWriter({ path: file, ...(c ? { indexOf: (i: number) => c.todo[i]!, continued: c.continued } : {}) }) : undefined;
    run.on('result', (r) => {
      // The core's row as it is: the file is the one the CLI writes for the same run.
      writer?.add(r); // the writer maps the index itself
      live.add(c ? { ...r, index: c.todo[r.index]! } : r);
    });
    this.live = live;
    this.writer = writer;
    void run.done.then(() => {
      if (this.live !== live) return;
      this.endedAt = Date.now();
      // Its last rows go now, before the run's report and record are made: they take the longest to reach the page.
      live.drain();
    });
  }

  /** The page drew progress message `seq` of the Run followed last. */
  progressSeen(seq: number): void {
    this.live?.seen(seq);
  }

  /**
   * Reads `pool`'s servers' `/metrics` while the Run followed last goes, each reading to the panel
   * with its progress: an unstreamed batch answers nothing until its end, and the servers say how
   * far it got. Stops when that Run settles.
   */
  watchServers(pool: SwarmPool): void {
    this.servers?.stop();
    this.servers = watchServerLoad(pool, (load) => this.live?.serversRead(load));
  }

  /** The Run followed last is over: its last rows go out and its file is closed. */
  async settle(): Promise<void> {
    this.servers?.stop();
    this.servers = undefined;
    this.live?.drain();
    await this.writer?.close();
    this.writer = undefined;
  }

  /** A comparison's arm is over; `figures` is null when it was cancelled or failed. */
  async armFinished(arm: ArmRound['arm'], round: number, figures: ArmRound | null, cancelled: boolean, error: string | null): Promise<void> {
    await this.settle();
    this.say({ type: 'armFinished', runId: this.runId, arm, round, figures, cancelled, error });
  }

  /** Whether `runFinished` was said: the rows and figures are all known (the record may still be being saved). */
  get hasFinished(): boolean {
    return Boolean(this.finished);
  }

  /**
   * Says `runFinished`, then saves the record and sends the history list that names it; resolves
   * once both are done, with whether the webview got `runFinished`.
   */
  async finish(saved: SavedRun): Promise<boolean> {
    await this.settle();
    // A comparison's table held its last arm live: the rows its record keeps replace them.
    const rows = saved.comparison ? { arm: armShown(saved, 'batched'), resultsJsonl: await this.history.jsonl(saved) } : undefined;
    this.finished = {
      type: 'runFinished',
      runId: this.runId,
      record: saved.record,
      ...(saved.reduce ? { reduce: saved.reduce } : {}),
      ...(saved.comparison ? { comparison: saved.comparison } : {}),
      ...(rows ? { rows } : {}),
      ...(this.endedAt ? { endedAt: this.endedAt } : {}),
    };
    const delivered = this.post(this.finished);
    await this.history.save(saved);
    this.post({ type: 'history', history: await this.history.list() });
    return delivered;
  }

  /** Everything said so far and every row, for a webview that just said `ready`. */
  resync(): void {
    for (const m of this.said) this.post(m);
    this.live?.resync();
    if (this.finished) this.post(this.finished);
  }

  private say(message: HostMessage): void {
    this.said.push(message);
    this.post(message);
  }
}

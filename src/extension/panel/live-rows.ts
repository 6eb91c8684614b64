import type { Run } from '../../core/index.ts';
import type { HostMessage, ResultRow, ServerLoad } from '../../panel/protocol.ts';
import { lightRowsJsonl, PREVIEW_CHARS } from '../../panel/result-rows.ts';
import { throttle, type Throttled } from '../../core/run/throttle.ts';

/**
 * A message with more rows than this carries none of their answers (the page asks for those in view:
 * fullRows): far more rows than a table shows at once. At 10,000 prompts over 1,000 endpoints most
 * rows land in the run's last second, and their 120-character starts were half of the bytes that
 * the extension host, the workbench and the page each took in turn (1.5 MB in one message).
 */
export const BURST_ROWS = 200;

/** At most this many progress messages a second reach the webview, however fast results come. */
export const PROGRESS_PER_SECOND = 4;
/** A progress message at least this often while the run goes, rows or not: the panel's clock moves during a long unstreamed batch. */
const HEARTBEAT_MS = 1000;

/**
 * A page that has never answered a progress message is not waited for longer than this: progress
 * must not stop for good where nothing answers (an extension host driven without a page, as its
 * tests do). Once the page has answered, every message waits for its answer.
 */
const UNANSWERED_MS = 2000;

/** Progress messages are numbered across runs and arms, so a page's late word about an earlier one is never taken for the one in flight. */
let lastSeq = 0;

/**
 * The rows of one run (or one arm of a comparison) on their way to the panel: throttled
 * `runProgress` messages, each with the rows that arrived since the previous one (never one message
 * per result), and one at a time: the next waits until the page says it drew the last
 * (`progressSeen`), and carries everything that came meanwhile. The page then sets the pace, and
 * no backlog builds in the workbench's thread ahead of the run's end. Rows go light (lightRow: long
 * answers cut); the page asks for the whole ones it needs (`fullRows`, from `rows`). Keeps every row
 * whole, so a webview that comes back mid-run gets them all at once.
 */
export class LiveRows {
  readonly rows: ResultRow[];
  private pending: ResultRow[];
  /** The progress message the page has not yet said it drew: none other goes until it does. */
  private unseen: number | undefined;
  /** A message was due while one was unseen: it goes when the page answers. */
  private held = false;
  /** Whether the page ever answered, and when the unseen message went. */
  private answered = false;
  private sentAt = 0;
  private readonly pace: Throttled;
  private readonly heartbeat: NodeJS.Timeout;
  /** The servers' latest reading, when they are watched (an unstreamed batch). */
  private servers: ServerLoad | undefined;
  /** Counts of the rows it started with (a continued run's kept rows). */
  private readonly base = { done: 0, ok: 0, failed: 0 };

  constructor(
    private readonly runId: string,
    private readonly run: Run<unknown>,
    /** Known at launch: the core may count some prompts only once they are made (reduce levels). */
    private readonly total: number,
    private readonly post: (message: HostMessage) => boolean,
    kept: readonly ResultRow[] = [],
    /** The prompts runStarted listed (by input index), which the page has: rows leave theirs out. */
    private readonly prompts?: readonly string[],
  ) {
    this.rows = [...kept];
    this.pending = [...kept];
    for (const r of kept) {
      this.base.done++;
      if (r.status === 'ok') this.base.ok++;
      if (r.status === 'failed') this.base.failed++;
    }
    this.pace = throttle(() => this.next(), 1000 / PROGRESS_PER_SECOND);
    if (kept.length) this.pace.call();
    this.heartbeat = setInterval(() => this.pace.call(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  add(row: ResultRow): void {
    this.rows.push(row);
    this.pending.push(row);
    this.pace.call();
  }

  /** The servers' latest reading goes with the next progress message. */
  serversRead(load: ServerLoad): void {
    this.servers = load;
    this.pace.call();
  }

  /** The page drew progress message `seq`: the next may go, with all that came meanwhile. */
  seen(seq: number): void {
    if (seq !== this.unseen) return;
    this.unseen = undefined;
    this.answered = true;
    if (!this.held) return;
    this.held = false;
    this.pace.call();
  }

  /**
   * Sends what is waiting now (before the arm's or the run's end is said), whether or not the page
   * drew the last: the end must not wait on it, and at most this one and the one in flight are ahead of it.
   */
  drain(): void {
    clearInterval(this.heartbeat);
    this.pace.cancel();
    if (this.pending.length || this.held) this.send(this.pending.splice(0), false);
    this.held = false;
  }

  /** Everything so far, for a webview that just said `ready` (the page before it answers nothing more). */
  resync(): void {
    this.pending = [];
    this.pace.cancel();
    this.held = false;
    this.send([...this.rows], true);
  }

  private next(): void {
    const waiting = this.unseen !== undefined && (this.answered || performance.now() - this.sentAt < UNANSWERED_MS);
    if (waiting) this.held = true;
    else this.send(this.pending.splice(0), true);
  }

  private send(results: ResultRow[], awaited: boolean): void {
    const p = this.run.progress;
    const b = this.base;
    const seq = awaited ? ++lastSeq : undefined;
    const delivered = this.post({
      type: 'runProgress',
      runId: this.runId,
      done: b.done + p.done,
      ok: b.ok + p.ok,
      failed: b.failed + p.failed,
      total: Math.max(b.done + p.total, this.total),
      elapsedMs: p.elapsedMs,
      resultsJsonl: lightRowsJsonl(results, this.prompts, results.length > BURST_ROWS ? 0 : PREVIEW_CHARS),
      ...(this.servers ? { servers: this.servers } : {}),
      ...(seq ? { seq } : {}),
    });
    // Not delivered (no page): nothing is in flight; a page that comes says `ready` and is resynced.
    this.unseen = delivered ? seq : undefined;
    this.sentAt = performance.now();
  }
}

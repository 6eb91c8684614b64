import { EventEmitter, setMaxListeners } from 'node:events';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { EndpointHealth } from '../pool/endpoint-states.ts';
import type { Member } from '../pool/selection.ts';
import type { CallContext } from '../pool/transport.ts';
import type { Usage } from '../requests/request-shapes.ts';
import { LogHistogram } from './histogram.ts';
import { RequestFailure } from '../http/failure.ts';
import { DRAINED, failedResult, type Clock, type PromptInput, type PromptList, type PromptResult, type Slot } from './result.ts';
import { SummaryBuilder, type RunSummary, type Tally } from './summary.ts';
import type { Slo } from './goodput.ts';

export interface RunProgress {
  total: number;
  done: number;
  ok: number;
  failed: number;
  cancelled: number;
  elapsedMs: number;
}

export interface EndpointEvent {
  endpoint: string;
  status: EndpointHealth;
  reason: string | null;
}

export interface RunEvents {
  result: [PromptResult];
  progress: [RunProgress];
  endpoint: [EndpointEvent];
  warning: [string];
}

export type { Slot } from './result.ts';

/** What a pattern gets from its run: the cancel signal, a clock, and the one way to report results. */
export interface RunContext extends CallContext, Clock {
  /**
   * Aborted when the run is drained: dispatches send nothing new, let their requests in flight finish,
   * and settle the prompts they never sent as cancelled (drained), for `--resume` on the next swarm.
   */
  drain: AbortSignal;
  /** Takes on prompts (results are owed for each) and returns their slots. */
  reserve(prompts: PromptList, level?: number): Slot[];
  settle(result: PromptResult): void;
  isSettled(index: number): boolean;
  addUsage(member: Member, usage: Usage): void;
  setModel(model: string): void;
  warn(message: string): void;
  /** Streamed runs: every inter-token gap, for ITL and stall detection. */
  readonly gaps: LogHistogram;
}

export interface RunReport<T> {
  results: PromptResult[];
  summary: RunSummary;
  /** What the pattern made of the results (the final text of a tree-reduce, …). */
  outcome: T | undefined;
  /** Why the run stopped short, if it did; every owed result is then failed or cancelled. */
  error: string | null;
  cancelled: boolean;
  /** Drained: what was in flight finished, the prompts never sent are cancelled (DRAINED). */
  drained: boolean;
}


export interface RunMeta {
  pattern: string;
  batch: boolean;
  stream?: boolean;
  /** Objectives to count goodput against (sustained-load runs). */
  slo?: Slo;
  /**
   * Keep every result for the report (default). Off, results only flow through the `result` event
   * and the report's `results` is empty: a million-prompt run then holds no answers in memory.
   */
  keepResults?: boolean;
}

/**
 * The one object every consumer watches: each result the moment it is final, progress, endpoint
 * changes, warnings; cancel; and the ordered results with a summary at the end. The job starts on
 * the next turn of the event loop, so listeners attached right after construction miss nothing.
 */
export class Run<T = void> {
  readonly done: Promise<RunReport<T>>;
  private readonly events = new EventEmitter();
  private readonly abort = new AbortController();
  private readonly draining = new AbortController();
  /** Slots still owed a result (settled ones are dropped unless results are kept). */
  private readonly slots: Array<Slot | undefined> = [];
  private readonly results: Array<PromptResult | undefined> = [];
  private settled = new Uint8Array(1024);
  private readonly tally: Tally = { requests: new Map(), paths: new Map(), usage: new Map(), model: null, gaps: new LogHistogram() };
  private readonly summary: SummaryBuilder;
  private readonly t0 = performance.now();
  private counts = { done: 0, ok: 0, failed: 0, cancelled: 0 };
  /** What the prompts a cancel stopped say. */
  private cancelReason = 'cancelled';

  constructor(
    private readonly pool: SwarmPool,
    readonly meta: RunMeta,
    job: (ctx: RunContext) => Promise<T>,
  ) {
    this.summary = new SummaryBuilder(meta);
    // Every request of the run listens to its signal (one per endpoint lookup, one per request in flight).
    setMaxListeners(0, this.abort.signal, this.draining.signal);
    this.done = new Promise((resolve) => setImmediate(() => resolve(this.execute(job))));
  }

  on<K extends keyof RunEvents>(event: K, listener: (...args: RunEvents[K]) => void): this {
    this.events.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  off<K extends keyof RunEvents>(event: K, listener: (...args: RunEvents[K]) => void): this {
    this.events.off(event, listener as (...args: unknown[]) => void);
    return this;
  }

  /** Counts a request sent for this run (its own, or asked beside it: the server context written with its results). */
  sent(endpoint: string, path: string): void {
    this.tally.requests.set(endpoint, (this.tally.requests.get(endpoint) ?? 0) + 1);
    this.tally.paths.set(path, (this.tally.paths.get(path) ?? 0) + 1);
  }

  /**
   * Stops sending; in-flight requests are aborted. Finished results are kept, the rest become
   * `cancelled`, with `reason` as their error when given (a walltime reached: walltimeReached).
   */
  cancel(reason?: string): void {
    if (this.abort.signal.aborted) return;
    if (reason) this.cancelReason = reason;
    // A RequestFailure as the reason: requests in flight end with it (the endpoint client reads it).
    this.abort.abort(new RequestFailure('cancelled', this.cancelReason));
  }

  /**
   * Finishes what is in flight and sends nothing new (a walltime about to end): the run ends once its
   * requests in flight are through; the prompts not sent end `cancelled` (DRAINED), finished results kept.
   */
  drain(): void {
    this.draining.abort();
  }

  get drained(): boolean {
    return this.draining.signal.aborted && !this.cancelled;
  }

  get cancelled(): boolean {
    return this.abort.signal.aborted;
  }

  get progress(): RunProgress {
    const { done, ok, failed, cancelled } = this.counts;
    return { total: this.slots.length, done, ok, failed, cancelled, elapsedMs: performance.now() - this.t0 };
  }

  private async execute(job: (ctx: RunContext) => Promise<T>): Promise<RunReport<T>> {
    const unsubscribe = this.pool.onStatus((s) =>
      this.events.emit('endpoint', { endpoint: s.id, status: s.status, reason: s.reason } satisfies EndpointEvent),
    );
    let outcome: T | undefined;
    let error: string | null = null;
    try {
      outcome = await job(this.context());
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    } finally {
      unsubscribe();
    }
    // Every prompt taken on gets exactly one result, whatever stopped the job.
    const cancelled = this.cancelled;
    const drained = this.drained;
    for (const slot of this.slots) {
      if (!slot || this.isSettled(slot.index)) continue;
      this.settle(failedResult(slot, cancelled || drained ? 'cancelled' : 'failed', cancelled ? this.cancelReason : drained ? DRAINED : (error ?? 'not sent'), performance.now() - this.t0));
    }
    const wallMs = performance.now() - this.t0;
    return {
      results: this.results as PromptResult[],
      summary: this.summary.finish(this.tally, wallMs),
      outcome,
      error: this.cancelled && (!error || error === 'cancelled') ? this.cancelReason : error,
      cancelled: this.cancelled,
      drained,
    };
  }

  private context(): RunContext {
    const signal = this.abort.signal;
    return {
      signal,
      drain: this.draining.signal,
      now: () => micros(performance.now() - this.t0),
      since: (t) => micros(t - this.t0),
      reserve: (prompts, level) => {
        const taken: Reservation = { prompts, first: this.slots.length, queuedMs: micros(performance.now() - this.t0), level };
        const made: Slot[] = new Array(prompts.length);
        for (let i = 0; i < prompts.length; i++) {
          made[i] = new ReservedSlot(taken.first + i, taken);
          this.slots.push(made[i]); // one by one: spreading a million slots into push() overflows the call stack
        }
        if (this.keep) this.results.length = this.slots.length;
        if (this.settled.length < this.slots.length) {
          const grown = new Uint8Array(Math.max(this.slots.length, this.settled.length * 2));
          grown.set(this.settled);
          this.settled = grown;
        }
        return made;
      },
      settle: (result) => this.settle(result),
      isSettled: (index) => this.isSettled(index),
      gaps: this.tally.gaps!,
      sent: (endpoint, path) => this.sent(endpoint, path),
      addUsage: (member, usage) => {
        // Added in place: individual mode tells one usage per prompt.
        const had = this.tally.usage.get(member.id);
        if (!had) this.tally.usage.set(member.id, { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens });
        else {
          had.promptTokens += usage.promptTokens;
          had.completionTokens += usage.completionTokens;
        }
      },
      setModel: (model) => {
        this.tally.model = model;
      },
      warn: (message) => this.events.emit('warning', message),
    };
  }

  private get keep(): boolean {
    return this.meta.keepResults !== false;
  }

  private isSettled(index: number): boolean {
    return this.settled[index] === 1;
  }

  private settle(result: PromptResult): void {
    if (this.isSettled(result.index)) throw new Error(`prompt ${result.index} settled twice`);
    this.settled[result.index] = 1;
    if (this.keep) this.results[result.index] = result;
    else this.slots[result.index] = undefined;
    this.summary.add(result);
    this.counts.done++;
    this.counts[result.status === 'ok' ? 'ok' : result.status]++;
    this.events.emit('result', result);
    if (this.events.listenerCount('progress')) this.events.emit('progress', this.progress);
  }
}

/** Prompts a run took on together: where they are read from, when, and at which level. */
interface Reservation {
  prompts: PromptList;
  first: number;
  queuedMs: number;
  level: number | undefined;
}

/**
 * A slot reads its prompt from the list it was reserved from, when asked: two fields a prompt
 * (~20 bytes), so a million slots do not hold a million prompt strings and input objects besides
 * the list (a prompts file stays bytes until each prompt is sent).
 */
class ReservedSlot implements Slot {
  constructor(
    readonly index: number,
    private readonly from: Reservation,
  ) {}

  private get source(): PromptInput {
    return this.from.prompts.at(this.index - this.from.first)!;
  }

  get prompt(): string {
    return this.source.prompt;
  }

  get input(): Record<string, unknown> | undefined {
    return this.source.input;
  }

  get queuedMs(): number {
    return this.from.queuedMs;
  }

  get level(): number | undefined {
    return this.from.level;
  }
}

/**
 * A run's times to the microsecond: finer digits are noise, and every result carries five of them
 * into its JSON row (`317.738`, not `317.73867500000006`: shorter rows, faster to write).
 */
const micros = (ms: number): number => Math.round(ms * 1000) / 1000;

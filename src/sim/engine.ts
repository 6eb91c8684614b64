import { performance } from 'node:perf_hooks';
import { BusyClock, type Interval } from './busy-clock.ts';
import { FrontEnd, type Entry } from './front-end.ts';
import type { EngineGauges, SchedulerCounters, SequenceTimes } from './metrics.ts';

/** Per-token latencies, read when a sequence starts so runtime changes (slowFactor) apply to new work. */
export interface Timing {
  ttftMs: number;
  tpotMs: number;
}

/** What a request hears of its sequences. With `onToken` the request streams and hears every token. */
export interface SequenceListener {
  /** Output token `k` of sequence `index` is out (an empty output still streams one, k = 0). */
  onToken?(index: number, k: number): void;
  /** Sequence `index` finished and left its slot; after its last onToken when streaming. */
  onDone(index: number): void;
}

/** One sequence a request asks for: its output tokens and, for the vLLM scheduler, its prompt. */
export interface SequenceWork {
  tokens: number;
  /** Prompt token ids (their count is the prefill; their blocks meet the prefix cache). */
  promptIds?: readonly number[];
  /** The request's `cache_salt`: prompts salted apart never share cached blocks. */
  salt?: string;
}

/** What the HTTP layer asks of an engine, whichever scheduler models it. */
export interface SimEngine {
  /** Schedules one request's sequences; returns a cancel function that frees what they hold. */
  submit(work: readonly SequenceWork[], listener: SequenceListener, arrivedAt?: number): () => void;
  readonly running: number;
  readonly waiting: number;
  /** Sequences held, waiting, or still in the front end: what a data-parallel load balancer compares. */
  readonly load: number;
  /** Modeled busy time, ms. */
  busyMs(): number;
  gauges(): EngineGauges;
  /** The vLLM scheduler's counters; the fixed-latency engine has none. */
  counters?(): SchedulerCounters;
}

interface Job {
  readonly listener: SequenceListener;
  readonly arrivedAt: number;
  /** When the front end is modeled to have let it in: arrival, after the requests before it. */
  admitAt: number;
  /** Its sequence count. */
  readonly size: number;
  cancelled: boolean;
  entry: Entry | undefined;
  /** Sequences of this job still in the waiting queue. */
  queued: number;
  readonly running: Set<Sequence>;
}

interface Sequence {
  readonly job: Job;
  readonly index: number;
  /** Deltas it streams: one per output token, at least one. */
  readonly steps: number;
  timer?: NodeJS.Timeout;
  interval?: Interval;
  startedAt?: number;
  timing?: Timing;
  /** Streaming only: when token 0 is due, the time between tokens, and how many went out. */
  firstAt?: number;
  stepMs?: number;
  sent?: number;
}

/**
 * vLLM's scheduling, reduced to what clients can observe: each HTTP request holds the single
 * front end for `requestOverheadMs` (one after another), then each of its sequences waits for one
 * of `maxNumSeqs` slots and holds it for ttft + (tokens - 1) × tpot: its first token comes ttft
 * after it got the slot, then one per engine step.
 *
 * Streamed sequences emit those tokens as they come. A sequence's first token has its own timer;
 * later ones come from one ticker per engine that runs only while some stream is past its first
 * token, so the cost is one timer per sequence plus one per engine step, never one per token.
 */
export class Engine implements SimEngine {
  private readonly queue: Sequence[] = [];
  private queueHead = 0;
  private waitingCount = 0;
  private readonly frontEnd: FrontEnd;
  private runningCount = 0;
  private pumping = false;
  /** The job being let in now: its sequences that find a slot at once start at its modeled admission. */
  private admitting: Job | null = null;
  /**
   * How many of the admitted job's sequences may still start at its admission: the slots free then. A
   * slot that comes free later in the same pass (a sequence this late process finishes at once) was not
   * free at the admission, and what takes it starts no earlier than now.
   */
  private slotsAtAdmission = 0;
  /** While a finished sequence hands its slot on: when, modeled, the slot came free. */
  private slotFreedAt = -Infinity;
  private readonly clock = new BusyClock();
  /** Streamed sequences past their first token. */
  private readonly stepping = new Set<Sequence>();
  /** Sequences holding a slot: what they generated so far is in vLLM's token counter already. */
  private readonly holding = new Set<Sequence>();
  /** Tokens of sequences cancelled midway: generated, counted, never finished. */
  private abandonedTokens = 0;
  private ticker: NodeJS.Timeout | undefined;
  private tickAt = 0;

  constructor(
    private readonly maxNumSeqs: number,
    requestOverheadMs: number,
    private readonly timing: () => Timing,
    private readonly observe: (times: SequenceTimes) => void = () => {},
  ) {
    this.frontEnd = new FrontEnd(requestOverheadMs);
  }

  get running(): number {
    return this.runningCount;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /** Sequences held, waiting, or still in the front end: what a data-parallel load balancer compares. */
  get load(): number {
    return this.runningCount + this.waitingCount + this.frontEnd.holding;
  }

  /**
   * Output tokens generated by now and not yet counted by a finish: the running sequences' so far
   * (streamed: sent; unstreamed: as modeled, one per engine step after the first), and those of
   * sequences cancelled midway. vLLM counts generation tokens every engine step, so its counter moves
   * during a long batch; a sequence's last token is counted when it finishes
   * (Metrics.sequenceFinished), so the counter never goes back.
   */
  generatingTokens(now = performance.now()): number {
    let tokens = this.abandonedTokens;
    for (const seq of this.holding) tokens += this.generatedSoFar(seq, now);
    return tokens;
  }

  private generatedSoFar(seq: Sequence, now: number): number {
    const t = seq.timing!;
    const modeled = seq.sent ?? (now < seq.startedAt! + t.ttftMs ? 0 : t.tpotMs > 0 ? Math.floor((now - seq.startedAt! - t.ttftMs) / t.tpotMs) + 1 : seq.steps);
    return Math.min(seq.steps - 1, modeled);
  }

  busyMs(): number {
    return this.clock.busyMs(performance.now());
  }

  /** Without a KV cache, its use is the slots held. */
  gauges(): EngineGauges {
    return { running: this.runningCount, waiting: this.waitingCount, capacity: this.maxNumSeqs, kvCacheUsage: this.runningCount / this.maxNumSeqs, generating: this.generatingTokens() };
  }

  /**
   * Schedules one request whose sequences generate `work[i].tokens` tokens; the listener hears them
   * (synchronously when all costs are zero). Returns a cancel function that frees the request's
   * slots, for clients that disconnect.
   *
   * `arrivedAt` is when the request reached the server. Modeled time counts from it, not from now:
   * one simulator process plays many servers, and while it was busy writing other endpoints'
   * answers this request would already have been running on a server of its own.
   */
  submit(work: readonly SequenceWork[], listener: SequenceListener, arrivedAt = performance.now()): () => void {
    const job: Job = { listener, arrivedAt, admitAt: arrivedAt, size: work.length, cancelled: false, entry: undefined, queued: 0, running: new Set() };
    job.entry = this.frontEnd.enter(work.length, arrivedAt, (admitAt) => {
      job.admitAt = admitAt;
      work.forEach(({ tokens }, index) => this.queue.push({ job, index, steps: Math.max(1, tokens) }));
      job.queued = work.length;
      this.waitingCount += work.length;
      this.admitting = job;
      this.slotsAtAdmission = this.maxNumSeqs - this.runningCount;
      this.pump();
      this.admitting = null;
    });
    return () => this.cancel(job);
  }

  private cancel(job: Job): void {
    if (job.cancelled) return;
    job.cancelled = true;
    job.entry?.withdraw();
    this.waitingCount -= job.queued;
    job.queued = 0;
    const now = performance.now();
    for (const seq of job.running) {
      this.abandonedTokens += this.generatedSoFar(seq, now);
      clearTimeout(seq.timer);
      this.stepping.delete(seq);
      this.release(seq, now);
    }
    this.pump();
  }

  /** Starts queued sequences while slots are free; re-entrant calls (zero-cost sequences) fold into the running loop. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    while (this.runningCount < this.maxNumSeqs && this.queueHead < this.queue.length) {
      const seq = this.queue[this.queueHead++]!;
      if (!seq.job.cancelled) this.start(seq);
    }
    // Drop the consumed prefix now and then instead of shifting on every dequeue.
    if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
    this.pumping = false;
  }

  private start(seq: Sequence): void {
    const { job } = seq;
    job.queued--;
    this.waitingCount--;
    this.runningCount++;
    job.running.add(seq);
    this.holding.add(seq);
    const timing = this.timing();
    const { ttftMs, tpotMs } = timing;
    const now = performance.now();
    // An unstreamed sequence that found a slot on admission started at the modeled admission, however
    // late this process got to it; one handed a slot starts when it came free. A stream starts no
    // earlier than now: back-dated, its first tokens would leave in one burst instead of at their pace.
    const onAdmission = this.admitting === job && !job.listener.onToken && this.slotsAtAdmission-- > 0;
    const at = onAdmission ? Math.min(job.admitAt, now) : Math.max(now, this.slotFreedAt);
    seq.startedAt = at;
    seq.timing = timing;
    seq.interval = this.clock.open(at, ttftMs + (seq.steps - 1) * tpotMs);
    if (job.listener.onToken) {
      seq.firstAt = at + ttftMs;
      seq.stepMs = tpotMs;
      seq.sent = 0;
      if (ttftMs > 0) seq.timer = setTimeout(() => this.firstToken(seq), ttftMs);
      else this.firstToken(seq);
    } else if (seq.interval.end > now) {
      seq.timer = setTimeout(() => this.finish(seq), seq.interval.end - now);
    } else {
      this.finish(seq);
    }
  }

  private firstToken(seq: Sequence): void {
    this.emitDue(seq, seq.stepMs! > 0 ? seq.firstAt! : Infinity);
    if (seq.sent! < seq.steps) {
      this.stepping.add(seq);
      this.startTicker(seq.stepMs!);
    }
  }

  /** Streams the tokens of `seq` due by `until`; finishes it after its last. */
  private emitDue(seq: Sequence, until: number): void {
    const { job } = seq;
    while (seq.sent! < seq.steps && seq.firstAt! + seq.sent! * seq.stepMs! <= until && !job.cancelled) {
      job.listener.onToken!(seq.index, seq.sent!++);
    }
    if (seq.sent === seq.steps && !job.cancelled) {
      this.stepping.delete(seq);
      this.finish(seq);
    }
  }

  private startTicker(periodMs: number): void {
    if (this.ticker) return;
    this.tickAt = performance.now();
    this.scheduleTick(periodMs);
  }

  /** One engine step per period on a fixed grid, so a late tick does not push later ones back (nor do missed ones burst). */
  private scheduleTick(periodMs: number): void {
    const period = Math.max(1, periodMs);
    const now = performance.now();
    this.tickAt += period;
    if (this.tickAt < now) this.tickAt += Math.ceil((now - this.tickAt) / period) * period;
    this.ticker = setTimeout(() => this.tick(period), this.tickAt - now);
  }

  /** An engine step: every stepping sequence sends its due tokens (more than one only to catch up). */
  private tick(period: number): void {
    this.ticker = undefined;
    // Due within half a step counts as now: sequences started between ticks keep a steady gap.
    const until = performance.now() + period / 2;
    for (const seq of [...this.stepping]) this.emitDue(seq, until);
    if (this.stepping.size > 0) this.scheduleTick(this.timing().tpotMs);
  }

  private finish(seq: Sequence): void {
    const now = performance.now();
    const { arrivedAt } = seq.job;
    const queueMs = seq.startedAt! - arrivedAt;
    this.observe({ queueMs, ttftMs: queueMs + seq.timing!.ttftMs, e2eMs: now - arrivedAt, tokens: seq.steps, tpotMs: seq.timing!.tpotMs });
    // A finished sequence kept its slot for its whole modeled time, even when its timer fired a
    // fraction of a millisecond early (libuv's clock is in whole ms) or its last token left within
    // half a step; the sequence that takes the slot starts then, not before.
    const freedAt = Math.max(now, seq.interval!.end);
    this.release(seq, freedAt);
    seq.job.listener.onDone(seq.index);
    this.slotFreedAt = freedAt;
    this.pump();
    this.slotFreedAt = -Infinity;
  }

  private release(seq: Sequence, now: number): void {
    seq.job.running.delete(seq);
    this.holding.delete(seq);
    this.runningCount--;
    this.clock.close(seq.interval!, now);
  }
}

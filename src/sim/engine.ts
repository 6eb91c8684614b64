import { performance } from 'node:perf_hooks';
import { BusyClock, type Interval } from './busy-clock.ts';

interface Job {
  readonly onDone: (index: number) => void;
  cancelled: boolean;
  frontEndTimer: NodeJS.Timeout | undefined;
  /** Sequences of this job still in the waiting queue. */
  queued: number;
  readonly running: Set<Sequence>;
}

interface Sequence {
  readonly job: Job;
  readonly index: number;
  readonly durationMs: number;
  timer?: NodeJS.Timeout;
  interval?: Interval;
}

/**
 * vLLM's scheduling, reduced to what clients can observe: each HTTP request holds the single
 * front end for `requestOverheadMs` (one after another), then each of its sequences waits for one
 * of `maxNumSeqs` slots and holds it for its modeled duration.
 */
export class Engine {
  private readonly queue: Sequence[] = [];
  private queueHead = 0;
  private waitingCount = 0;
  private runningCount = 0;
  private frontEndFreeAt = 0;
  private pumping = false;
  private readonly clock = new BusyClock();

  constructor(
    private readonly maxNumSeqs: number,
    private readonly requestOverheadMs: number,
  ) {}

  get running(): number {
    return this.runningCount;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  busyMs(): number {
    return this.clock.busyMs(performance.now());
  }

  /**
   * Schedules one request whose sequences take `durationsMs`; `onDone(i)` fires as sequence i
   * finishes (synchronously when all costs are zero). Returns a cancel function that frees the
   * request's slots, for clients that disconnect.
   */
  submit(durationsMs: readonly number[], onDone: (index: number) => void): () => void {
    const job: Job = { onDone, cancelled: false, frontEndTimer: undefined, queued: 0, running: new Set() };
    const admit = (): void => {
      job.frontEndTimer = undefined;
      durationsMs.forEach((durationMs, index) => this.queue.push({ job, index, durationMs }));
      job.queued = durationsMs.length;
      this.waitingCount += durationsMs.length;
      this.pump();
    };
    const now = performance.now();
    this.frontEndFreeAt = Math.max(now, this.frontEndFreeAt) + this.requestOverheadMs;
    const delay = this.frontEndFreeAt - now;
    if (delay > 0) job.frontEndTimer = setTimeout(admit, delay);
    else admit();
    return () => this.cancel(job);
  }

  private cancel(job: Job): void {
    if (job.cancelled) return;
    job.cancelled = true;
    clearTimeout(job.frontEndTimer);
    this.waitingCount -= job.queued;
    job.queued = 0;
    const now = performance.now();
    for (const seq of job.running) {
      clearTimeout(seq.timer);
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
    seq.interval = this.clock.open(performance.now(), seq.durationMs);
    if (seq.durationMs > 0) seq.timer = setTimeout(() => this.finish(seq), seq.durationMs);
    else this.finish(seq);
  }

  private finish(seq: Sequence): void {
    this.release(seq, performance.now());
    seq.job.onDone(seq.index);
    this.pump();
  }

  private release(seq: Sequence, now: number): void {
    seq.job.running.delete(seq);
    this.runningCount--;
    this.clock.close(seq.interval!, now);
  }
}

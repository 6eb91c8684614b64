import { performance } from 'node:perf_hooks';
import type { SequenceListener, SequenceWork, SimEngine } from './engine.ts';
import { FrontEnd, type Entry } from './front-end.ts';
import { blockHashes, blocksFor, BlockPool, type Block } from './kv-cache.ts';
import type { EngineGauges, SchedulerCounters, SequenceTimes } from './metrics.ts';
import { BLOCK_SIZE, stepMs, type StepCosts } from './step-model.ts';

export interface VllmEngineConfig {
  maxNumSeqs: number;
  /** Tokens one step may compute: prompt chunks and decode tokens together (chunked prefill). */
  maxNumBatchedTokens: number;
  kvCacheTokens: number;
  requestOverheadMs: number;
  enablePrefixCaching: boolean;
  costs: StepCosts;
  /** Read at every step, so a runtime slow-down applies at once. */
  slowFactor: () => number;
}

interface Job {
  readonly listener: SequenceListener;
  readonly arrivedAt: number;
  readonly size: number;
  cancelled: boolean;
  entry: Entry | undefined;
  readonly seqs: Seq[];
}

interface Seq {
  readonly job: Job;
  readonly index: number;
  readonly prompt: readonly number[];
  readonly salt: string;
  /** Output tokens it will generate (at least one). */
  readonly outputs: number;
  hashes?: string[];
  /** Tokens whose KV is computed; back to 0 when preempted (recompute). */
  computed: number;
  generated: number;
  blocks: Block[];
  state: 'waiting' | 'running' | 'done';
  firstScheduledAt?: number;
  firstTokenAt?: number;
}

/**
 * vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py), reduced to what clients and /metrics see:
 * engine steps on a modeled clock. Each step first serves the running sequences in order (a decode
 * token each, or the next chunk of a prompt) within the `maxNumBatchedTokens` budget, allocating KV
 * blocks as they grow; when none are free it preempts the newest running sequence, whose blocks are
 * freed and whose tokens are recomputed later. Then, if nothing was preempted, it admits waiting
 * sequences while slots (`maxNumSeqs`), budget and blocks allow, after looking their prompt up in
 * the prefix cache. The step lasts what the step model says; its tokens come out at its end.
 *
 * Modeled time runs ahead on its own clock: steps follow each other back to back while there is
 * work, and a step starts no earlier than the real time its work arrived, so a lagging process
 * delivers late but never models less work than it was given.
 */
export class VllmEngine implements SimEngine {
  private readonly pool: BlockPool;
  /** Arrivals in order, consumed from `head`; preempted sequences go before them, newest first (vLLM prepends them). */
  private readonly arrivals: Seq[] = [];
  private head = 0;
  private readonly requeued: Seq[] = [];
  private waitingCount = 0;
  private readonly runningList: Seq[] = [];
  private readonly frontEnd: FrontEnd;
  /** Modeled end of the last step. */
  private clock = 0;
  private stepping = false;
  private servedMs = 0;
  private readonly stats: SchedulerCounters;

  constructor(
    private readonly config: VllmEngineConfig,
    private readonly observe: (times: SequenceTimes) => void = () => {},
  ) {
    const blocks = Math.max(1, Math.floor(config.kvCacheTokens / BLOCK_SIZE));
    this.pool = new BlockPool(blocks);
    this.frontEnd = new FrontEnd(config.requestOverheadMs);
    this.stats = { preemptions: 0, prefixQueries: 0, prefixHits: 0, steps: 0, modeledMs: 0, blocks, blockSize: BLOCK_SIZE };
  }

  get running(): number {
    return this.runningList.length;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  get load(): number {
    return this.runningList.length + this.waitingCount + this.frontEnd.holding;
  }

  /** Time its steps kept it busy as served (slowFactor applied): what clients waited. */
  busyMs(): number {
    return this.servedMs;
  }

  gauges(): EngineGauges {
    return { running: this.running, waiting: this.waiting, capacity: this.config.maxNumSeqs, kvCacheUsage: this.pool.usage() };
  }

  counters(): SchedulerCounters {
    return { ...this.stats };
  }

  submit(work: readonly SequenceWork[], listener: SequenceListener, arrivedAt = performance.now()): () => void {
    const job: Job = { listener, arrivedAt, size: work.length, cancelled: false, entry: undefined, seqs: [] };
    for (const [index, w] of work.entries()) {
      // A prompt is at least one token: vLLM never schedules an empty one.
      const prompt = w.promptIds && w.promptIds.length > 0 ? w.promptIds : [0];
      job.seqs.push({ job, index, prompt, salt: w.salt ?? '', outputs: Math.max(1, w.tokens), computed: 0, generated: 0, blocks: [], state: 'waiting' });
    }
    job.entry = this.frontEnd.enter(job.size, arrivedAt, () => {
      for (const seq of job.seqs) this.arrivals.push(seq);
      this.waitingCount += job.size;
      this.kick();
    });
    return () => this.cancel(job);
  }

  private cancel(job: Job): void {
    if (job.cancelled) return;
    job.cancelled = true;
    job.entry?.withdraw();
    for (const seq of job.seqs) this.drop(seq);
  }

  /** Takes a sequence out of the scheduler for good, its blocks back to the pool. */
  private drop(seq: Seq): void {
    if (seq.state === 'running') remove(this.runningList, seq);
    // A waiting one stays in its queue, skipped when its turn comes.
    else if (seq.state === 'waiting' && seq.job.entry?.admitted) this.waitingCount--;
    this.pool.release(seq.blocks);
    seq.blocks = [];
    seq.state = 'done';
  }

  /** Starts a step if there is work and none is under way. */
  private kick(): void {
    if (this.stepping || (this.runningList.length === 0 && this.waitingCount === 0)) return;
    this.clock = Math.max(this.clock, performance.now());
    this.step();
  }

  private step(): void {
    const scheduled = this.schedule();
    if (scheduled.length === 0) {
      this.stepping = false;
      return;
    }
    let tokens = 0;
    let context = 0;
    for (const [seq, n] of scheduled) {
      tokens += n;
      context += seq.computed + n;
    }
    const modeled = stepMs(this.config.costs, tokens, context);
    const duration = modeled * this.config.slowFactor();
    const start = this.clock;
    const end = start + duration;
    for (const [seq] of scheduled) seq.firstScheduledAt ??= start;
    this.clock = end;
    this.stats.steps++;
    // The GPU's time as modeled, whatever slowFactor paces it at: a test may run the model at full speed (0) and still read it.
    this.stats.modeledMs += modeled;
    this.servedMs += duration;
    this.stepping = true;
    const finishStep = (): void => {
      this.complete(scheduled, end);
      if (this.runningList.length === 0 && this.waitingCount === 0) {
        this.stepping = false;
        return;
      }
      this.step();
    };
    const delay = end - performance.now();
    // Behind the model (a loaded process): catch up without the 1 ms floor of timers, still letting I/O in between.
    if (delay > 0) setTimeout(finishStep, delay);
    else setImmediate(finishStep);
  }

  /** One step's plan: each sequence with the tokens it computes. */
  private schedule(): Array<[Seq, number]> {
    const { maxNumSeqs, maxNumBatchedTokens } = this.config;
    let budget = maxNumBatchedTokens;
    const out: Array<[Seq, number]> = [];
    let preempted = false;
    for (let i = 0; i < this.runningList.length && budget > 0; i++) {
      const seq = this.runningList[i]!;
      const n = Math.min(this.pending(seq), budget);
      if (n <= 0) continue;
      const need = () => blocksFor(seq.computed + n) - seq.blocks.length;
      while (need() > this.pool.freeBlocks) {
        const victim = this.runningList.at(-1)!;
        this.preempt(victim);
        preempted = true;
        if (victim === seq) break;
      }
      if (seq.state !== 'running') break;
      const fresh = need() > 0 ? this.pool.allocate(need())! : [];
      for (const block of fresh) seq.blocks.push(block); // a long prompt's blocks: no spread into a call
      out.push([seq, n]);
      budget -= n;
    }
    // vLLM admits nothing new in a step that had to preempt.
    if (preempted) return out;
    for (let seq = this.nextWaiting(); seq && this.runningList.length < maxNumSeqs && budget > 0; seq = this.nextWaiting()) {
      const hits = this.config.enablePrefixCaching ? this.cachedPrefix(seq) : [];
      const computed = hits.length * BLOCK_SIZE;
      const n = Math.min(this.total(seq) - computed, budget);
      const fresh = blocksFor(computed + n) - hits.length;
      // A cached block nobody holds sits in the free queue: taking it leaves one fewer to allocate.
      const idleHits = hits.reduce((k, b) => k + (b.refs === 0 ? 1 : 0), 0);
      if (fresh + idleHits > this.pool.freeBlocks) break;
      this.pool.touch(hits);
      seq.blocks = [...hits, ...this.pool.allocate(fresh)!];
      seq.computed = computed;
      if (this.config.enablePrefixCaching) {
        this.stats.prefixQueries += this.total(seq);
        this.stats.prefixHits += computed;
      }
      if (this.requeued.at(-1) === seq) this.requeued.pop();
      else this.head++;
      this.waitingCount--;
      seq.state = 'running';
      this.runningList.push(seq);
      out.push([seq, n]);
      budget -= n;
    }
    return out;
  }

  /** Tokens the sequence must hold KV for before it can sample its next token: its prompt and its output so far. */
  private total(seq: Seq): number {
    return seq.prompt.length + seq.generated;
  }

  private pending(seq: Seq): number {
    return this.total(seq) - seq.computed;
  }

  /**
   * Cached blocks of the sequence's prompt prefix, as vLLM looks them up: full blocks only, and never
   * the whole prompt (its last token is always computed, to sample from).
   */
  private cachedPrefix(seq: Seq): Block[] {
    seq.hashes ??= blockHashes(seq.prompt, seq.salt);
    const usable = Math.floor((this.total(seq) - 1) / BLOCK_SIZE);
    return this.pool.match(seq.hashes.slice(0, usable));
  }

  /** Preemption by recompute: the sequence gives back its blocks and waits at the head of the queue. */
  private preempt(seq: Seq): void {
    remove(this.runningList, seq);
    this.pool.release(seq.blocks);
    seq.blocks = [];
    seq.computed = 0;
    seq.state = 'waiting';
    this.requeued.push(seq);
    this.waitingCount++;
    this.stats.preemptions++;
  }

  /** The waiting sequence whose turn it is (cancelled ones are dropped on the way), or undefined. */
  private nextWaiting(): Seq | undefined {
    while (this.requeued.length > 0) {
      const seq = this.requeued.at(-1)!;
      if (seq.state === 'waiting') return seq;
      this.requeued.pop();
    }
    while (this.head < this.arrivals.length && this.arrivals[this.head]!.state !== 'waiting') this.head++;
    // Drop the consumed prefix now and then instead of shifting on every admission.
    if (this.head > 1024 && this.head * 2 > this.arrivals.length) {
      this.arrivals.splice(0, this.head);
      this.head = 0;
    }
    return this.arrivals[this.head];
  }

  /** The end of a step: computed tokens land, full prompt blocks join the prefix cache, caught-up sequences sample a token. */
  private complete(scheduled: ReadonlyArray<[Seq, number]>, end: number): void {
    for (const [seq, n] of scheduled) {
      if (seq.state !== 'running' || seq.job.cancelled) continue;
      const before = seq.computed;
      seq.computed += n;
      if (this.config.enablePrefixCaching) this.cacheFull(seq, before);
      if (seq.computed < this.total(seq)) continue;
      const k = seq.generated++;
      seq.firstTokenAt ??= end;
      seq.job.listener.onToken?.(seq.index, k);
      if (seq.generated >= seq.outputs) this.finish(seq, end);
    }
  }

  private cacheFull(seq: Seq, before: number): void {
    seq.hashes ??= blockHashes(seq.prompt, seq.salt);
    const from = Math.floor(before / BLOCK_SIZE);
    const to = Math.min(Math.floor(seq.computed / BLOCK_SIZE), seq.hashes.length);
    for (let i = from; i < to; i++) this.pool.cache(seq.blocks[i]!, seq.hashes[i]!);
  }

  private finish(seq: Seq, end: number): void {
    this.drop(seq);
    const { arrivedAt } = seq.job;
    const tokens = seq.outputs;
    this.observe({
      queueMs: seq.firstScheduledAt! - arrivedAt,
      ttftMs: seq.firstTokenAt! - arrivedAt,
      e2eMs: end - arrivedAt,
      tokens,
      tpotMs: tokens > 1 ? (end - seq.firstTokenAt!) / (tokens - 1) : 0,
    });
    seq.job.listener.onDone(seq.index);
  }
}

function remove<T>(list: T[], item: T): void {
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}

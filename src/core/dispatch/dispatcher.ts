import { RequestFailure } from '../http/failure.ts';
import type { Member } from '../pool/selection.ts';
import type { SentTimes, Shape } from '../pool/transport.ts';
import type { Answer } from '../requests/request-shapes.ts';
import { answeredResult, DRAINED, failedResult, type PromptResult } from '../run/result.ts';
import type { RunContext, Slot } from '../run/run.ts';
import { SCRAPED } from './routing.ts';
import type { Plan } from './dispatch-plan.ts';
import { derive, Flight, newGroup, type FlightOwner, type Group } from './flight.ts';
import { Hedging } from './hedging.ts';
import { Placement } from './placement.ts';
import { Recovery } from './recovery.ts';

/** A probe of a benched endpoint carries no more prompts than this. */
const PROBE_PROMPTS = 8;
/** How long the last requests may take to finish (a usage chunk) once every prompt is answered. */
const GRACE_MS = 1_000;
/** How often `/metrics` is read for load-aware routing. */
const SCRAPE_MS = 2_000;
/** How often hung and stalled requests are looked for. */
const WATCH_MS = 200;

/**
 * Sends prompts and settles each exactly once, whatever the swarm does: retries on the same
 * endpoint for what may pass (resets, 429, 502-504), fails over for every endpoint failure
 * (refused, reset, timeout, 5xx after retries, a stalled stream), benches failing endpoints behind
 * a circuit breaker, hedges requests that hang once the rest of the swarm is idle, and fails a
 * prompt only for its own fault or when no endpoint is left to take it. Prompt i starts on member
 * i mod n (batched: grouped as the pool groups batches). Resolves when every slot is settled or the
 * run is cancelled; with `collect`, with the slots' results in order.
 */
export function dispatch(plan: Plan, slots: readonly Slot[], shape: Shape, collect = false): Promise<PromptResult[]> {
  return new Dispatcher(plan, slots, shape, collect).done;
}

/** Each prompt on its own `POST /v1/chat/completions`. */
export const dispatchIndividual = (plan: Plan, slots: readonly Slot[], collect = false) => dispatch(plan, slots, 'chat', collect);

/** Aurora-Swarm's batch prompting: each endpoint's share of the prompts in `POST /v1/completions` lists. */
export const dispatchBatched = (plan: Plan, slots: readonly Slot[], collect = false) => dispatch(plan, slots, 'batch', collect);

/**
 * The queue of groups and the settling of every prompt. Where a group goes is Placement's; what a
 * failed request's prompts do next is Recovery's; watching the requests in flight is Hedging's.
 */
class Dispatcher implements FlightOwner {
  readonly done: Promise<PromptResult[]>;
  private resolve!: (results: PromptResult[]) => void;
  private readonly placement: Placement;
  private readonly recovery: Recovery;
  private readonly hedging: Hedging;
  /** Initial groups not yet sent (individual: made lazily from `cursor`), and groups sent back (first). */
  private readonly initial: Group[];
  private cursor = 0;
  private queue: Group[] = [];
  /** Round-robin lists waiting for their endpoint to have room, by endpoint slot. */
  private readonly queued = new Map<number, Group[]>();
  readonly active = new Set<Flight>();
  /** Flights of `active` judged hung, which no longer count against the concurrency. */
  private freed = 0;
  private scraper: NodeJS.Timeout | undefined;
  /** Notes from the pool already passed on to the run. */
  private readonly noted = new Set<string>();
  private pending: number;
  private waiting = 0;
  private watch: NodeJS.Timeout | undefined;
  private grace: NodeJS.Timeout | undefined;
  private readonly results: PromptResult[] | null;
  private readonly offset: number;
  /** HTTP requests written that carried each prompt (retries, failovers and hedges included), by index from `offset`. */
  private readonly tries: Uint32Array;
  finished = false;
  readonly ctx: RunContext;

  constructor(
    private readonly plan: Plan,
    private readonly slots: readonly Slot[],
    private readonly shape: Shape,
    collect: boolean,
  ) {
    this.done = new Promise((resolve) => (this.resolve = resolve));
    this.ctx = plan.ctx;
    this.pending = slots.length;
    this.offset = slots[0]?.index ?? 0;
    this.tries = new Uint32Array(slots.length);
    this.results = collect ? new Array(slots.length) : null;
    this.placement = new Placement(plan.pool, plan.selection.members, shape);
    this.recovery = new Recovery(plan, this, performance.now());
    this.hedging = new Hedging(plan, this, this.placement, this.recovery);
    this.initial = shape === 'chat' ? [] : this.placement.lists(slots);
    if (!slots.length || plan.ctx.signal.aborted) {
      this.finish();
      return;
    }
    if (plan.ctx.drain.aborted) {
      this.drained();
      return;
    }
    plan.ctx.signal.addEventListener('abort', () => this.cancel(), { once: true });
    plan.ctx.drain.addEventListener('abort', () => this.drained(), { once: true });
    this.watch = setInterval(() => this.hedging.patrol(), WATCH_MS);
    if (SCRAPED.has(this.placement.route)) this.scrape();
    else this.pump();
  }

  /** The next group to send: those sent back first, then the initial ones in order. */
  private next(): Group | undefined {
    if (this.queue.length) return this.queue.shift();
    if (this.shape !== 'chat') return this.initial.shift();
    if (this.cursor >= this.slots.length) return undefined;
    const i = this.cursor++;
    const slot = this.slots[i]!;
    return newGroup([slot], this.placement.homeOf(slot, i));
  }

  /**
   * A hung request, raced by hedges of its prompts, gives its place under the concurrency (the run's
   * and the pool's) back: it holds a socket, not a server's work. Otherwise requests stuck on a hung
   * endpoint could fill the cap, and their hedges would wait behind them until the hung server
   * answered or timed out (as many as `concurrency` went to one before it was judged hung).
   */
  free(flight: Flight): void {
    if (flight.freed) return;
    flight.freed = true;
    this.freed++;
    flight.release();
  }

  again(group: Group, first: boolean): void {
    if (first) this.queue.unshift(group);
    else this.queue.push(group);
  }

  /** Reads every member's `/metrics` now and every SCRAPE_MS while the dispatch runs; sending starts after the first read. */
  private scrape(): void {
    const once = () => this.placement.scrape(this.ctx.signal, this.ctx);
    this.park(once(), () => undefined);
    this.scraper = setInterval(() => void once(), SCRAPE_MS);
  }

  hasQueued(): boolean {
    return this.queue.length > 0 || (this.shape !== 'chat' ? this.initial.length > 0 : this.cursor < this.slots.length);
  }

  /** A list waits for its endpoint to have room. */
  private queueFor(home: Member, group: Group): void {
    let queue = this.queued.get(home.slot);
    if (!queue) this.queued.set(home.slot, (queue = []));
    queue.push(group);
  }

  /**
   * Lists waiting for an endpoint go back to the queue, in order, once it has room (those it has no room
   * for come back here), or when it no longer takes requests (they are sent elsewhere, as a failover's are).
   */
  private release(): void {
    if (!this.queued.size) return; // individual mode never queues by endpoint: nothing to read the clock for
    const now = performance.now();
    for (const [slot, queue] of this.queued) {
      if (this.placement.full(slot) && this.plan.pool.admits(slot, now) === 'yes') continue;
      this.queued.delete(slot);
      this.queue = queue.concat(this.queue);
    }
  }

  /** Starts groups while the pool's concurrency allows. */
  pump(): void {
    if (this.ctx.drain.aborted) return this.drained();
    this.release();
    const limit = this.plan.pool.options.concurrency;
    while (!this.finished && this.active.size - this.freed < limit) {
      const group = this.next();
      if (!group) return;
      if (group.slots.every((s) => this.isSettled(s))) continue;
      const pick = this.placement.pick(group);
      if (pick === 'home') {
        this.queueFor(group.home!, group);
        continue;
      }
      if (pick === 'busy') {
        // Every endpoint has its lists: the next one goes to whichever finishes first.
        this.queue.unshift(group);
        return;
      }
      if (!pick && this.recovery.mayHeal()) {
        // Every endpoint is benched, some behind a route that may come back: hold on until it does.
        this.queue.unshift(group);
        return;
      }
      if (!pick && this.recovery.waitForBench(group)) {
        // Every endpoint is benched for a cool-down (a restart, a brief overload): wait it out rather than fail the prompts unsent.
        this.queue.unshift(group);
        return;
      }
      if (!pick) {
        this.failGroup(group, this.recovery.noneLeft(group));
        continue;
      }
      this.launch(group, pick.member, pick.probe);
    }
  }

  private launch(group: Group, member: Member, probe: boolean): void {
    const { pool, selection, gen } = this.plan;
    if (probe && group.slots.length > PROBE_PROMPTS) {
      this.queue.unshift(derive(group, group.slots.slice(PROBE_PROMPTS)));
      group = derive(group, group.slots.slice(0, PROBE_PROMPTS));
    }
    if (probe) pool.startProbe(member.slot);
    const now = performance.now();
    group.firstTryAt ||= now;
    const timeout = this.shape === 'chat' ? pool.options.timeoutMs : pool.batchTimeoutMs(group.slots.length * (gen.n ?? 1));
    const flight = new Flight(this, group, member, probe, now, Boolean(gen.stream), now + timeout);
    this.active.add(flight);
    this.hedging.launched(flight);
    this.placement.left(member.slot, group.slots.length);
    const prompts = group.slots.map((s) => s.prompt);
    pool.limit((release) => {
      flight.release = release;
      // Judged hung while it waited in line behind another run's requests: it starts outside the cap.
      if (flight.freed) release();
      return pool.send(member, selection.model, prompts, this.shape, gen, flight, flight);
    }).then(
      () => this.succeeded(flight),
      (err: unknown) => this.failed(flight, RequestFailure.from(err)),
    );
  }

  answer(flight: Flight, i: number, answer: Answer, times: SentTimes): void {
    const slot = flight.group.slots[i]!;
    const now = performance.now();
    this.hedging.answered(flight.member.slot, now);
    this.recovery.answered(flight.member.slot, now);
    if (answer.stream) {
      flight.tokens = true;
      this.hedging.stragglers.firstToken(answer.stream.firstTokenAt - times.sentAt);
    }
    if (this.isSettled(slot)) return;
    this.settle(answeredResult(slot, flight.member.id, this.attemptsOf(slot), answer, times, flight.ownUsage, this.ctx, this.plan.gen));
  }

  /** A note from the pool, told to the run once. */
  note(message: string): void {
    if (this.noted.has(message)) return;
    this.noted.add(message);
    this.ctx.warn(message);
  }

  promptError(flight: Flight, i: number, failure: RequestFailure): void {
    const slot = flight.group.slots[i]!;
    if (!this.isSettled(slot)) this.settle(failedResult(slot, 'failed', failure.message, this.ctx.now(), flight.member.id, this.attemptsOf(slot), this.ctx.since(flight.startedAt)));
  }

  private succeeded(flight: Flight): void {
    this.retire(flight);
    this.plan.pool.succeeded(flight.member.slot);
    const took = performance.now() - flight.startedAt;
    this.hedging.stragglers.took(took);
    this.placement.took(flight.member.slot, took);
    // Every prompt answered is the rule (one per request in individual mode): the list of those missing is made only when some are.
    if (!flight.hedged && !flight.group.slots.every((s) => this.isSettled(s))) {
      this.failSlots(flight.group.slots, flight, 'the response ended without an answer for this prompt');
    }
    this.hedging.settle();
    this.pump();
  }

  private failed(flight: Flight, failure: RequestFailure): void {
    this.retire(flight);
    this.recovery.failed(flight, failure);
  }

  /** Holds a group back until `until` settles (a backoff, a tunnel reconnecting), then `then`. */
  park<T>(until: Promise<T>, then: (value: T) => void): void {
    this.waiting++;
    void until.then(
      (value) => {
        this.waiting--;
        if (this.finished) return;
        then(value);
        this.pump();
      },
      () => {
        this.waiting--;
      },
    );
  }

  private retire(flight: Flight): void {
    this.active.delete(flight);
    if (flight.freed) this.freed--;
    this.hedging.retired(flight);
    this.placement.back(flight.member.slot, flight.group.slots.length);
    // Drained: the last request through ends the dispatch, also when its prompts wait for a retry that will not come.
    if (!this.active.size && this.ctx.drain.aborted) queueMicrotask(() => this.drained());
    if (this.finished && !this.active.size) {
      clearTimeout(this.grace);
      this.resolve(this.results ?? []);
    }
  }

  /** A generation request carrying this prompt was written. */
  carried(slot: Slot): void {
    this.tries[slot.index - this.offset]!++;
  }

  private attemptsOf(slot: Slot): number {
    return this.tries[slot.index - this.offset]!;
  }

  isSettled(slot: Slot): boolean {
    return this.plan.ctx.isSettled(slot.index);
  }

  private settle(result: PromptResult): void {
    this.plan.ctx.settle(result);
    if (this.results) this.results[result.index - this.offset] = result;
    if (--this.pending === 0) this.finish();
  }

  failSlots(slots: readonly Slot[], flight: Flight, error: string): void {
    const at = this.plan.ctx.now();
    for (const slot of slots) if (!this.isSettled(slot)) this.settle(failedResult(slot, 'failed', error, at, flight.member.id, this.attemptsOf(slot), this.ctx.since(flight.startedAt)));
  }

  private failGroup(group: Group, error: string): void {
    const at = this.plan.ctx.now();
    for (const slot of group.slots) if (!this.isSettled(slot)) this.settle(failedResult(slot, 'failed', error, at, null, this.attemptsOf(slot)));
  }

  /**
   * Drained: nothing new is sent (pump stops here); once the requests in flight are through, the
   * prompts never sent — queued, waiting for a retry, failed over — are settled as cancelled (DRAINED).
   */
  private drained(): void {
    if (this.finished || this.active.size) return;
    const at = this.ctx.now();
    for (const slot of this.slots) if (!this.isSettled(slot)) this.settle(failedResult(slot, 'cancelled', DRAINED, at, null, this.attemptsOf(slot)));
  }

  /**
   * Cancelled: every request is aborted, and every prompt still owed a result is settled at once as
   * cancelled, with the requests that carried it (and the endpoint it was on, when it was in flight).
   */
  private cancel(): void {
    const flights = [...this.active];
    this.stop();
    // The run's reason when it gave one (a walltime reached), else plain `cancelled`.
    const reason = this.ctx.signal.reason instanceof RequestFailure ? this.ctx.signal.reason.message : 'cancelled';
    for (const flight of flights) flight.signal.abort(new RequestFailure('cancelled', reason));
    // After the answers already in hand are given out (a cancel from a result event comes in the middle of a list's).
    queueMicrotask(() => {
      const at = this.ctx.now();
      for (const flight of flights) {
        for (const slot of flight.group.slots) if (!this.isSettled(slot)) this.settle(failedResult(slot, 'cancelled', reason, at, flight.member.id, this.attemptsOf(slot), this.ctx.since(flight.startedAt)));
      }
      for (const slot of this.slots) if (!this.isSettled(slot)) this.settle(failedResult(slot, 'cancelled', reason, at, null, this.attemptsOf(slot)));
      clearTimeout(this.grace);
      this.resolve(this.results ?? []);
    });
  }

  /** Nothing more is sent: no pump, patrol, bench wait or scrape from now on. */
  private stop(): boolean {
    if (this.finished) return false;
    this.finished = true;
    clearInterval(this.watch);
    this.recovery.stop();
    clearInterval(this.scraper);
    return true;
  }

  /**
   * Every slot is settled: hedge requests still running for answered prompts are aborted, and the
   * dispatch ends when the last request is through — a stream that just delivered its last answer
   * still owes its usage chunk — or after a short grace, when whatever still runs is aborted.
   */
  private finish(): void {
    if (!this.stop()) return;
    this.hedging.abortAll();
    if (!this.active.size) return this.resolve(this.results ?? []);
    this.grace = setTimeout(() => {
      for (const flight of this.active) flight.signal.abort(new RequestFailure('cancelled', 'every prompt answered'));
      this.resolve(this.results ?? []);
    }, GRACE_MS);
  }
}

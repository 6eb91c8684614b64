import { setTimeout as sleep } from 'node:timers/promises';
import { Abort } from './http/abort.ts';
import { RequestFailure } from './http/failure.ts';
import type { GenerationOptions } from './options.ts';
import type { Member, Selection, SendCall, SendSink, SentTimes, Shape, SwarmPool } from './pool.ts';
import type { Answer, Usage } from './request-shapes.ts';
import { retryDelay } from './retry.ts';
import { answeredResult, DRAINED, failedResult, type PromptResult } from './result.ts';
import type { RunContext, Slot } from './run.ts';
import { readLoad, type EndpointLoad } from './load.ts';
import { OVERLOAD_FACTOR, prefixSlot, routeScore, SCRAPED, type RouteStrategy } from './routing.ts';
import { Stragglers } from './stragglers.ts';

/** One run's view of the swarm: the pool, the endpoints and model picked for it, its options. */
export interface Plan {
  pool: SwarmPool;
  selection: Selection;
  gen: GenerationOptions;
  ctx: RunContext;
}

/** Prompts travelling together (one request's worth), with what they went through so far. */
interface Group {
  slots: Slot[];
  /** Where they go first (round-robin); null once they are being failed over. */
  home: Member | null;
  /** Endpoints that failed them. */
  tried: Set<number>;
  /** Endpoint failures so far, and attempts on the current endpoint in a row. */
  failures: number;
  retries: number;
  refusals: number;
  firstTryAt: number;
  /** What the last endpoint that failed them said. */
  lastError: string | null;
  /** A copy of a hung request's prompts: whichever side answers first wins, the other is aborted. */
  hedge?: boolean;
}

/**
 * A group on its way: one `pool.send` in flight. It is that call's signal, tallies and sink at once
 * (prototype methods, no closures: individual mode makes one per prompt).
 */
class Flight implements SendCall, SendSink {
  readonly signal = new Abort();
  /** `performance.now()` of the headers or the latest streamed event; a token seen yet. */
  lastActivity: number;
  tokens = false;
  gaps = 0;
  gapMs = 0;
  /** Its prompts were also sent elsewhere (a hedge). */
  hedged = false;
  ownUsage: Usage | null = null;

  constructor(
    private readonly owner: Dispatcher,
    readonly group: Group,
    readonly member: Member,
    readonly probe: boolean,
    readonly startedAt: number,
    readonly stream: boolean,
    /** Unstreamed: the whole answer must be in by then (`performance.now()`), however its body trickles. */
    readonly deadline: number,
  ) {
    this.lastActivity = startedAt;
  }

  sent(endpoint: string, path: string): void {
    this.owner.ctx.sent(endpoint, path);
  }

  onCarried(i: number): void {
    this.owner.carried(this.group.slots[i]!);
  }

  note(message: string): void {
    this.owner.note(message);
  }

  onActivity(at: number): void {
    this.lastActivity = at;
  }

  onAnswer(i: number, answer: Answer, times: SentTimes): void {
    this.owner.answer(this, i, answer, times);
  }

  onPromptError(i: number, failure: RequestFailure): void {
    this.owner.promptError(this, i, failure);
  }

  onUsage(usage: Usage, own: boolean): void {
    this.owner.ctx.addUsage(this.member, usage);
    if (own) this.ownUsage = usage;
  }

  onGap(ms: number): void {
    this.owner.ctx.gaps.add(ms);
    this.gaps++;
    this.gapMs += ms;
  }
}

/** A probe of a benched endpoint carries no more prompts than this. */
const PROBE_PROMPTS = 8;
/** How long the last requests may take to finish (a usage chunk) once every prompt is answered. */
const GRACE_MS = 1_000;
/** Routed batches: lists go out this many at a time per endpoint, so an endpoint that finishes early takes more. */
const BATCHES_PER_ENDPOINT = 2;
/** …each about this share of the endpoint's even part, so the queue can even the endpoints out. */
const PARTS_PER_ENDPOINT = 4;
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

class Dispatcher {
  readonly done: Promise<PromptResult[]>;
  private resolve!: (results: PromptResult[]) => void;
  private readonly members: Member[];
  private readonly load: Map<number, number>;
  /** Initial groups not yet sent (individual: made lazily from `cursor`), and groups sent back (first). */
  private readonly initial: Group[];
  private cursor = 0;
  private again: Group[] = [];
  /** Round-robin lists waiting for their endpoint to have room, by endpoint slot. */
  private readonly queued = new Map<number, Group[]>();
  private readonly active = new Set<Flight>();
  private readonly hedging = new Set<Flight>();
  private readonly route: RouteStrategy;
  /** Requests in flight per endpoint, and each endpoint's latest `/metrics` (load-aware routing). */
  private readonly flights = new Map<number, number>();
  private readonly loads = new Map<number, EndpointLoad | null>();
  /** Each endpoint's recent time per request (an exponential average, ms). */
  private readonly paces = new Map<number, number>();
  /** Prompts in flight across the endpoints. */
  private inFlight = 0;
  private paceSum = 0;
  private scraper: NodeJS.Timeout | undefined;
  /** When each endpoint last answered a prompt of this dispatch (`performance.now()`). */
  private readonly lastAnswer = new Map<number, number>();
  /** A route is being waited for; routes found intact while their endpoint failed. */
  private healing = false;
  private readonly intact = new Set<number>();
  /** Endpoints whose failover was announced since they last answered. */
  private readonly warned = new Set<number>();
  /** Notes from the pool already passed on to the run. */
  private readonly noted = new Set<string>();
  private pending: number;
  private waiting = 0;
  private watch: NodeJS.Timeout | undefined;
  private grace: NodeJS.Timeout | undefined;
  private readonly stragglers: Stragglers;
  private readonly results: PromptResult[] | null;
  private readonly offset: number;
  /** HTTP requests written that carried each prompt (retries, failovers and hedges included), by index from `offset`. */
  private readonly tries: Uint32Array;
  private finished = false;
  /** Every endpoint is benched: the pump sleeps until the first may be probed again. */
  private benchTimer: NodeJS.Timeout | undefined;
  private readonly startedAt = performance.now();
  readonly ctx: RunContext;

  constructor(
    private readonly plan: Plan,
    private readonly slots: readonly Slot[],
    private readonly shape: Shape,
    collect: boolean,
  ) {
    this.done = new Promise((resolve) => (this.resolve = resolve));
    this.ctx = plan.ctx;
    this.members = plan.selection.members;
    this.load = new Map(this.members.map((m) => [m.slot, 0]));
    this.pending = slots.length;
    this.offset = slots[0]?.index ?? 0;
    this.tries = new Uint32Array(slots.length);
    this.results = collect ? new Array(slots.length) : null;
    this.stragglers = new Stragglers(plan.pool.options, plan.ctx, Boolean(plan.gen.stream));
    this.route = plan.pool.options.route;
    this.initial = shape === 'chat' ? [] : this.lists(slots);
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
    this.watch = setInterval(() => this.patrol(), WATCH_MS);
    if (SCRAPED.has(this.route)) this.scrape();
    else this.pump();
  }

  private group(slots: Slot[], home: Member | null): Group {
    return { slots, home, tried: new Set(), failures: 0, retries: 0, refusals: 0, firstTryAt: 0, lastError: null };
  }

  /** The next group to send: those sent back first, then the initial ones in order. */
  private next(): Group | undefined {
    if (this.again.length) return this.again.shift();
    if (this.shape !== 'chat') return this.initial.shift();
    if (this.cursor >= this.slots.length) return undefined;
    const i = this.cursor++;
    const slot = this.slots[i]!;
    return this.group([slot], this.homeOf(slot, i));
  }

  /** Where a prompt goes first: Aurora-Swarm's i mod n, its prefix's endpoint, or wherever is least loaded when it is sent. */
  private homeOf(slot: Slot, i: number): Member | null {
    const n = this.members.length;
    if (this.route === 'round-robin') return this.members[i % n]!;
    return this.route === 'prefix-aware' ? this.members[prefixSlot(slot.prompt, n)]! : null;
  }

  /**
   * A batch run's lists. Round-robin: Aurora-Swarm's one list per endpoint (prompt i to endpoint i mod n),
   * cut at the cap. Routed: smaller lists in a shared queue, each taken by the endpoint the strategy picks
   * when it has room, so a slow endpoint ends up with fewer prompts instead of setting the makespan.
   */
  private lists(slots: readonly Slot[]): Group[] {
    const { pool } = this.plan;
    if (this.route === 'round-robin') return pool.groupBatches(slots, this.members).map(({ member, items }) => this.group(items, member));
    const size = Math.max(1, Math.min(pool.options.maxPromptsPerRequest, Math.ceil(slots.length / (this.members.length * PARTS_PER_ENDPOINT))));
    const byHome = new Map<Member | null, Slot[]>();
    slots.forEach((slot, i) => {
      const home = this.homeOf(slot, i);
      let list = byHome.get(home);
      if (!list) byHome.set(home, (list = []));
      list.push(slot);
    });
    const groups: Group[] = [];
    for (const [home, list] of byHome) for (let at = 0; at < list.length; at += size) groups.push(this.group(list.slice(at, at + size), home));
    return groups;
  }

  /** Reads every member's `/metrics` now and every SCRAPE_MS while the dispatch runs; sending starts after the first read. */
  private scrape(): void {
    const { pool } = this.plan;
    const once = () =>
      Promise.all(this.members.map(async (m) => this.loads.set(m.slot, await readLoad(pool, m.slot, this.ctx.signal, this.ctx)))).then(() => undefined);
    this.park(once(), () => undefined);
    this.scraper = setInterval(() => void once(), SCRAPE_MS);
  }

  /**
   * Whether a benched endpoint's route (an SSH tunnel) may heal: then one wait for it is under way
   * (one at a time: the tunnel reconnects once for all), and sending resumes when it ends. A route
   * that was intact — the endpoint itself is down — is not asked again.
   */
  private mayHeal(): boolean {
    const { pool } = this.plan;
    const awaitRoute = pool.options.awaitRoute;
    if (!awaitRoute) return false;
    if (this.healing) return true;
    const now = performance.now();
    const cut = this.members.find((m) => pool.routed(m.slot) && pool.admits(m.slot, now) === 'no' && !this.intact.has(m.slot));
    if (!cut) return false;
    this.healing = true;
    this.park(awaitRoute(cut.id, this.ctx.signal).catch(() => false), (healed) => {
      this.healing = false;
      if (!healed) return void this.intact.add(cut.slot);
      for (const m of this.members) if (pool.routed(m.slot) && pool.admits(m.slot, performance.now()) === 'no') pool.healed(m.slot);
    });
    return true;
  }

  /**
   * Whether a group no endpoint will take now may wait for one: when some endpoint is down (gone, not
   * answering with errors), one being probed answers soon (and pumps again), and a benched one may be
   * probed once its cool-down ends — waited for while that is within the retry budget, counted from
   * the group's first try (or the dispatch's start).
   */
  private waitForBench(group: Group): boolean {
    const { pool } = this.plan;
    // Only a swarm that is gone (refused, reset: a restart, a lost route) may come back; one that answers with errors is failing.
    if (!this.members.some((m) => pool.statusOf(m.slot) === 'down' || pool.statusOf(m.slot) === 'tunnel-down')) return false;
    const now = performance.now();
    const reopens = this.members.map((m) => pool.reopensAt(m.slot));
    if (reopens.some((at) => at <= now)) return true; // a probe is under way
    const soonest = reopens.reduce((a, b) => Math.min(a, b), Infinity);
    const budget = pool.options.retry.budgetMs;
    if (soonest - (group.firstTryAt || this.startedAt) > budget) return false;
    if (!this.benchTimer) {
      this.ctx.warn(`every endpoint serving ${this.plan.selection.model} is benched after failing; waiting ${((soonest - now) / 1000).toFixed(1)} s for one to be tried again (up to ${(budget / 1000).toFixed(0)} s from a prompt's first try)`);
      this.benchTimer = setTimeout(() => {
        this.benchTimer = undefined;
        this.pump();
      }, soonest - now + 1);
    }
    return true;
  }

  private hasQueued(): boolean {
    return this.again.length > 0 || (this.shape !== 'chat' ? this.initial.length > 0 : this.cursor < this.slots.length);
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
    const now = performance.now();
    for (const [slot, queue] of this.queued) {
      if (this.full(slot) && this.plan.pool.admits(slot, now) === 'yes') continue;
      this.queued.delete(slot);
      this.again = queue.concat(this.again);
    }
  }

  /** Starts groups while the pool's concurrency allows. */
  private pump(): void {
    if (this.ctx.drain.aborted) return this.drained();
    this.release();
    const limit = this.plan.pool.options.concurrency;
    while (!this.finished && this.active.size < limit) {
      const group = this.next();
      if (!group) return;
      if (group.slots.every((s) => this.isSettled(s))) continue;
      const pick = this.pick(group);
      if (pick === 'home') {
        this.queueFor(group.home!, group);
        continue;
      }
      if (pick === 'busy') {
        // Every endpoint has its lists: the next one goes to whichever finishes first.
        this.again.unshift(group);
        return;
      }
      if (!pick && this.mayHeal()) {
        // Every endpoint is benched, some behind a route that may come back: hold on until it does.
        this.again.unshift(group);
        return;
      }
      if (!pick && this.waitForBench(group)) {
        // Every endpoint is benched for a cool-down (a restart, a brief overload): wait it out rather than fail the prompts unsent.
        this.again.unshift(group);
        return;
      }
      if (!pick) {
        this.failGroup(group, noneLeft(this.plan, group));
        continue;
      }
      this.launch(group, pick.member, pick.probe);
    }
  }

  /**
   * The endpoint for a group: its home while that is healthy and untried, else the least loaded
   * healthy one it has not failed on, else one it failed on before that is healthy again; a benched
   * endpoint whose cool-down is over may be probed. None: every endpoint is benched.
   */
  private pick(group: Group): { member: Member; probe: boolean } | 'busy' | 'home' | null {
    const pool = this.plan.pool;
    const now = performance.now();
    const home = group.home;
    if (home && !group.tried.has(home.slot) && pool.admits(home.slot, now) === 'yes') {
      if (!this.full(home.slot) && !this.overloaded(home)) return { member: home, probe: false };
      // Round-robin: a list waits for its own endpoint (prompt i goes to endpoint i mod n).
      if (this.route === 'round-robin') return 'home';
    }
    let best: Member | undefined;
    let bestScore = Infinity;
    let probe: Member | undefined;
    let busy = false;
    for (const m of this.members) {
      const admits = pool.admits(m.slot, now);
      if (admits === 'no') continue;
      if (this.full(m.slot)) {
        busy = true;
        continue;
      }
      if (admits === 'probe') {
        probe ??= m;
        continue;
      }
      // Untried endpoints first, then as the strategy scores them (the least loaded).
      const score = (group.tried.has(m.slot) ? 1e12 : 0) + routeScore(this.route, this.load.get(m.slot)!, this.pace(m), this.loads.get(m.slot));
      if (score < bestScore) [best, bestScore] = [m, score];
    }
    if (best && !group.tried.has(best.slot)) return { member: best, probe: false };
    if (probe) return { member: probe, probe: true };
    if (best) return { member: best, probe: false };
    return busy ? 'busy' : null;
  }

  /** An endpoint's recent time per request relative to the average endpoint's; 1 until it is known. */
  private pace(m: Member): number {
    const mine = this.paces.get(m.slot);
    return mine === undefined ? 1 : mine / (this.paceSum / this.paces.size);
  }

  /**
   * Whether an endpoint has batch work enough. Routed: BATCHES_PER_ENDPOINT lists, so the queue goes to
   * whoever is free. Round-robin: two full lists' worth of prompts (at least one list) — more than a
   * server runs at once, so it never waits for work, while the rest of its lists wait here, not in its
   * queue: the answers in flight (and the client's memory) stay proportional to the swarm, not to the input.
   */
  private full(slot: number): boolean {
    if (this.shape === 'chat') return false;
    const flights = this.flights.get(slot) ?? 0;
    if (this.route !== 'round-robin') return flights >= BATCHES_PER_ENDPOINT;
    return flights > 0 && this.load.get(slot)! >= BATCHES_PER_ENDPOINT * this.plan.pool.options.maxPromptsPerRequest;
  }

  /** Prefix-aware routing gives way when the prefix's endpoint holds far more than its share. */
  private overloaded(m: Member): boolean {
    if (this.route !== 'prefix-aware') return false;
    return this.load.get(m.slot)! > OVERLOAD_FACTOR * (this.inFlight / this.members.length) + 1;
  }

  private launch(group: Group, member: Member, probe: boolean): void {
    const { pool, selection, gen } = this.plan;
    if (probe && group.slots.length > PROBE_PROMPTS) {
      this.again.unshift(this.derive(group, group.slots.slice(PROBE_PROMPTS)));
      group = this.derive(group, group.slots.slice(0, PROBE_PROMPTS));
    }
    if (probe) pool.startProbe(member.slot);
    const now = performance.now();
    group.firstTryAt ||= now;
    const timeout = this.shape === 'chat' ? pool.options.timeoutMs : pool.batchTimeoutMs(group.slots.length * (gen.n ?? 1));
    const flight = new Flight(this, group, member, probe, now, Boolean(gen.stream), now + timeout);
    this.active.add(flight);
    this.flights.set(member.slot, (this.flights.get(member.slot) ?? 0) + 1);
    if (group.hedge) this.hedging.add(flight);
    this.load.set(member.slot, this.load.get(member.slot)! + group.slots.length);
    this.inFlight += group.slots.length;
    const prompts = group.slots.map((s) => s.prompt);
    pool.limit(() => pool.send(member, selection.model, prompts, this.shape, gen, flight, flight)).then(
      () => this.succeeded(flight),
      (err: unknown) => this.failed(flight, RequestFailure.from(err)),
    );
  }

  answer(flight: Flight, i: number, answer: Answer, times: SentTimes): void {
    const slot = flight.group.slots[i]!;
    this.lastAnswer.set(flight.member.slot, performance.now());
    // Only an endpoint taking requests again may be announced again (a late answer from a refused one must not repeat its warning).
    if (this.plan.pool.admits(flight.member.slot, performance.now()) === 'yes') this.warned.delete(flight.member.slot);
    if (answer.stream) {
      flight.tokens = true;
      this.stragglers.firstToken(answer.stream.firstTokenAt - times.sentAt);
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
    this.stragglers.took(took);
    const pace = this.paces.get(flight.member.slot);
    const next = pace === undefined ? took : 0.8 * pace + 0.2 * took;
    this.paces.set(flight.member.slot, next);
    this.paceSum += next - (pace ?? 0);
    const missing = flight.group.slots.filter((s) => !this.isSettled(s));
    if (missing.length && !flight.hedged) this.failSlots(missing, flight, 'the response ended without an answer for this prompt');
    this.settleHedges();
    this.pump();
  }

  private failed(flight: Flight, failure: RequestFailure): void {
    this.retire(flight);
    const { pool, ctx } = this.plan;
    const group = flight.group;
    const unanswered = group.slots.filter((s) => !this.isSettled(s));
    if (failure.kind === 'cancelled' || this.finished) {
      if (flight.probe) pool.abandonProbe(flight.member.slot);
      this.pump();
      return;
    }
    if (!failure.endpointFault) {
      // The prompts' own fault (a 4xx), or an answer we cannot read: the same anywhere else.
      if (flight.probe) pool.abandonProbe(flight.member.slot);
      this.failSlots(unanswered, flight, failure.message);
      this.pump();
      return;
    }
    if (!unanswered.length || flight.hedged) {
      // It lost to a hedge, or hedge copies already carry its prompts: its endpoint is not to be trusted
      // for now. Every prompt answered elsewhere first is no failure of it, only slowness.
      if (flight.hedged && !unanswered.length) pool.outrun(flight.member.slot, failure);
      else pool.failed(flight.member.slot, failure);
      this.pump();
      return;
    }
    const rest = this.derive(group, unanswered);
    // Through a tunnel, a reset or refusal may be the route's (a dead ssh master), not the endpoint's:
    // wait for the route to heal and send again, or fail over if it was not the route.
    if (failure.endpointDown && pool.options.awaitRoute && pool.routed(flight.member.slot)) {
      pool.failed(flight.member.slot, failure);
      this.park(pool.options.awaitRoute(flight.member.id, ctx.signal).catch(() => false), (healed) => {
        if (healed) {
          pool.healed(flight.member.slot);
          rest.home = flight.member;
          this.again.unshift(rest);
        } else this.failOver(rest, flight, failure);
      });
      return;
    }
    const delay = this.retryDelay(rest, failure);
    if (delay !== null) {
      if (flight.probe) pool.abandonProbe(flight.member.slot);
      rest.retries++;
      if (failure.kind === 'refused') rest.refusals++;
      rest.home = flight.member;
      this.park(sleep(delay, true, { ref: true }), () => this.again.unshift(rest));
      return;
    }
    pool.failed(flight.member.slot, failure);
    this.failOver(rest, flight, failure);
  }

  /** Another attempt on the same endpoint after a backoff, or null: fail over now. Timeouts and stalls never wait. */
  private retryDelay(group: Group, failure: RequestFailure): number | null {
    const policy = this.plan.pool.options.retry;
    if (!failure.retryable || group.retries + 1 >= policy.maxAttempts) return null;
    if (failure.kind === 'refused' && group.refusals >= 1) return null;
    const delay = retryDelay(failure, group.retries + 1, policy);
    return performance.now() - group.firstTryAt + delay > policy.budgetMs ? null : delay;
  }

  /** Sends a failed group's unanswered prompts to the healthy endpoints, spread over them, or fails them when none is left. */
  private failOver(group: Group, flight: Flight, failure: RequestFailure): void {
    group.tried.add(flight.member.slot);
    group.failures++;
    group.lastError = failure.message;
    group.retries = 0;
    group.refusals = 0;
    group.home = null;
    const { pool, ctx } = this.plan;
    if (!pool.options.failover || group.failures >= pool.options.maxEndpointFailures) {
      this.failSlots(group.slots, flight, failure.message);
      this.pump();
      return;
    }
    const now = performance.now();
    const healthy = this.members.filter((m) => !group.tried.has(m.slot) && pool.admits(m.slot, now) === 'yes').length;
    for (const part of spread(group.slots, Math.max(1, healthy))) this.again.push(this.derive(group, part));
    // Once per endpoint until it answers again: a thousand failed-over requests make one line, not a thousand.
    if (!this.warned.has(flight.member.slot)) {
      this.warned.add(flight.member.slot);
      ctx.warn(`${flight.member.id}: ${failure.message}; its unanswered prompts go to other endpoints`);
    }
    this.pump();
  }

  /** Holds a group back until `until` settles (a backoff, a tunnel reconnecting), then `then`. */
  private park<T>(until: Promise<T>, then: (value: T) => void): void {
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

  private derive(from: Group, slots: Slot[]): Group {
    return { ...from, slots, tried: new Set(from.tried) };
  }

  private retire(flight: Flight): void {
    this.active.delete(flight);
    this.flights.set(flight.member.slot, this.flights.get(flight.member.slot)! - 1);
    this.hedging.delete(flight);
    this.load.set(flight.member.slot, this.load.get(flight.member.slot)! - flight.group.slots.length);
    this.inFlight -= flight.group.slots.length;
    // Drained: the last request through ends the dispatch, also when its prompts wait for a retry that will not come.
    if (!this.active.size && this.ctx.drain.aborted) queueMicrotask(() => this.drained());
    if (this.finished && !this.active.size) {
      clearTimeout(this.grace);
      this.resolve(this.results ?? []);
    }
  }

  /** Every WATCH_MS: stalled streams are cut, and hung requests hedged once the rest of the swarm is idle. */
  private patrol(): void {
    const now = performance.now();
    for (const flight of this.active) {
      const stall = this.stragglers.stalled(flight, now);
      if (stall) flight.signal.abort(new RequestFailure('stalled', stall));
      // undici's body timeout is per chunk: a body that trickles a byte at a time would never end without this.
      else if (!flight.stream && now > flight.deadline && flight.lastActivity > flight.startedAt) {
        flight.signal.abort(new RequestFailure('timeout', `timed out after ${((now - flight.startedAt) / 1000).toFixed(1)} s: the answer's body was still arriving`));
      }
    }
    if (!this.plan.pool.options.hedge) return;
    const pool = this.plan.pool;
    const idle = this.hasQueued() ? [] : this.members.filter((m) => this.load.get(m.slot) === 0 && pool.admits(m.slot, now) === 'yes');
    const moved = new Map<Member, { count: number; why: string }>();
    const overdue = this.stragglers.overdueAfter();
    const lagAfter = idle.length ? this.stragglers.lagAfter() : Infinity;
    // An unstreamed request whose headers came is answered (its body is on the way, or the client is busy): never late.
    const late = (f: Flight) => (f.stream || f.lastActivity === f.startedAt) && now - f.startedAt > overdue;
    const due = [...this.active].filter((f) => !f.hedged && (late(f) || Stragglers.lagging(f, lagAfter)));
    // Requests merely slow share the idle endpoints, all at once rather than one per patrol.
    const share = Math.max(1, Math.floor(idle.length / Math.max(1, due.length)));
    for (const flight of due) {
      // Hung: not even headers, and nothing answered on its endpoint since it left, while requests elsewhere finish in a fraction of
      // its time. Its prompts go elsewhere now, and the endpoint gets no more until a probe says it is back.
      const hung = late(flight) && flight.lastActivity === flight.startedAt && (this.lastAnswer.get(flight.member.slot) ?? -Infinity) < flight.startedAt;
      const targets = (hung ? this.members : idle).filter((m) => m.slot !== flight.member.slot && !flight.group.tried.has(m.slot) && pool.admits(m.slot, now) === 'yes');
      const unanswered = flight.group.slots.filter((s) => !this.isSettled(s));
      if (!unanswered.length || !targets.length) continue;
      flight.hedged = true;
      this.hedging.add(flight);
      const copy = this.derive(flight.group, unanswered);
      copy.tried.add(flight.member.slot);
      copy.home = null;
      copy.hedge = true;
      for (const part of spread(unanswered, hung ? targets.length : Math.min(share, targets.length))) this.again.push(this.derive(copy, part));
      const why = late(flight) ? 'no answer in time' : `its tokens come ${(flight.gapMs / flight.gaps / (lagAfter / this.plan.pool.options.hedgeFactor)).toFixed(1)}× slower than the swarm's`;
      moved.set(flight.member, { count: (moved.get(flight.member)?.count ?? 0) + unanswered.length, why });
      if (hung && pool.admits(flight.member.slot, now) === 'yes') {
        pool.failed(flight.member.slot, new RequestFailure('stalled', `no answer for ${((now - flight.startedAt) / 1000).toFixed(1)} s while the other endpoints answered`));
      }
    }
    for (const [member, { count, why }] of moved) {
      if (this.warned.has(member.slot)) continue;
      this.warned.add(member.slot);
      this.plan.ctx.warn(`${member.id}: ${why}; its ${count} unanswered prompt(s) also go to other endpoints (the first answer wins)`);
    }
    if (moved.size) this.pump();
  }

  /** Aborts hedged requests whose prompts all got their answers elsewhere; an original that lost is benched. */
  private settleHedges(): void {
    for (const flight of this.hedging) {
      if (!flight.group.slots.every((s) => this.isSettled(s))) continue;
      this.hedging.delete(flight);
      const slow = flight.hedged ? `answered elsewhere first: no answer after ${((performance.now() - flight.startedAt) / 1000).toFixed(1)} s` : null;
      flight.signal.abort(slow ? new RequestFailure('stalled', slow) : new RequestFailure('cancelled', 'answered elsewhere first'));
    }
  }

  /** A generation request carrying this prompt was written. */
  carried(slot: Slot): void {
    this.tries[slot.index - this.offset]!++;
  }

  private attemptsOf(slot: Slot): number {
    return this.tries[slot.index - this.offset]!;
  }

  private isSettled(slot: Slot): boolean {
    return this.plan.ctx.isSettled(slot.index);
  }

  private settle(result: PromptResult): void {
    this.plan.ctx.settle(result);
    if (this.results) this.results[result.index - this.offset] = result;
    if (--this.pending === 0) this.finish();
  }

  private failSlots(slots: readonly Slot[], flight: Flight, error: string): void {
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
    clearTimeout(this.benchTimer);
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
    for (const flight of this.hedging) flight.signal.abort(new RequestFailure('cancelled', 'answered elsewhere first'));
    if (!this.active.size) return this.resolve(this.results ?? []);
    this.grace = setTimeout(() => {
      for (const flight of this.active) flight.signal.abort(new RequestFailure('cancelled', 'every prompt answered'));
      this.resolve(this.results ?? []);
    }, GRACE_MS);
  }
}

/** Splits `items` into at most `parts` contiguous parts of near-equal size. */
function spread<T>(items: readonly T[], parts: number): T[][] {
  const k = Math.max(1, Math.min(parts, items.length));
  const size = Math.ceil(items.length / k);
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += size) out.push(items.slice(at, at + size));
  return out;
}

function noneLeft(plan: Plan, group: Group): string {
  const reasons = [...new Set(plan.selection.members.map((m) => plan.pool.endpoints[m.slot]!.reason).filter((r): r is string => Boolean(r)))];
  const why = `every endpoint serving ${plan.selection.model} is down or benched${reasons.length ? ` (${reasons.slice(0, 3).join('; ')}${reasons.length > 3 ? '; …' : ''})` : ''}`;
  return group.failures ? `${group.lastError ?? 'failed'}, then ${why}` : why;
}

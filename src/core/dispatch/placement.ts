import { readLoad, type EndpointLoad } from '../endpoints/load.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { Member } from '../pool/selection.ts';
import type { Shape } from '../pool/transport.ts';
import { OVERLOAD_FACTOR, routeScore, type RouteStrategy } from './routing.ts';
import type { Meter } from '../http/request-meter.ts';
import type { Slot } from '../run/run.ts';
import { newGroup, type Group } from './flight.ts';
import { PrefixHomes } from './prefix-homes.ts';

/** Routed batches: lists go out this many at a time per endpoint, so an endpoint that finishes early takes more. */
const BATCHES_PER_ENDPOINT = 2;
/** …each about this share of the endpoint's even part, so the queue can even the endpoints out. */
const PARTS_PER_ENDPOINT = 4;

/**
 * Where a dispatch's prompts go: each one's home (Aurora-Swarm's i mod n, its prefix's endpoint, or
 * none), a batch run's lists, and for a group about to leave the endpoint the strategy picks among
 * those that take requests, from what is in flight on each, their pace and their `/metrics`.
 */
export class Placement {
  readonly route: RouteStrategy;
  /** Prompts in flight per endpoint, and requests; each endpoint's latest `/metrics` (load-aware routing). */
  private readonly load: Map<number, number>;
  private readonly flights = new Map<number, number>();
  private readonly loads = new Map<number, EndpointLoad | null>();
  /** Each endpoint's recent time per request (an exponential average, ms). */
  private readonly paces = new Map<number, number>();
  /** Prompts in flight across the endpoints. */
  private inFlight = 0;
  private paceSum = 0;
  /** Prefix-aware: each prefix's endpoint, prefixes spread evenly over the members. */
  private readonly prefixHomes: PrefixHomes;

  constructor(
    private readonly pool: SwarmPool,
    readonly members: readonly Member[],
    private readonly shape: Shape,
  ) {
    this.route = pool.options.route;
    this.load = new Map(members.map((m) => [m.slot, 0]));
    this.prefixHomes = new PrefixHomes(members.length);
  }

  /** Where a prompt goes first: Aurora-Swarm's i mod n, its prefix's endpoint, or wherever is least loaded when it is sent. */
  homeOf(slot: Slot, i: number): Member | null {
    const n = this.members.length;
    if (this.route === 'round-robin') return this.members[i % n]!;
    return this.route === 'prefix-aware' ? this.members[this.prefixHomes.of(slot.prompt)]! : null;
  }

  /**
   * A batch run's lists. Round-robin: Aurora-Swarm's one list per endpoint (prompt i to endpoint i mod n),
   * cut at the cap. Routed: smaller lists in a shared queue, each taken by the endpoint the strategy picks
   * when it has room, so a slow endpoint ends up with fewer prompts instead of setting the makespan.
   */
  lists(slots: readonly Slot[]): Group[] {
    const pool = this.pool;
    if (this.route === 'round-robin') return pool.groupBatches(slots, this.members).map(({ member, items }) => newGroup(items, member));
    const size = Math.max(1, Math.min(pool.options.maxPromptsPerRequest, Math.ceil(slots.length / (this.members.length * PARTS_PER_ENDPOINT))));
    const byHome = new Map<Member | null, Slot[]>();
    slots.forEach((slot, i) => {
      const home = this.homeOf(slot, i);
      let list = byHome.get(home);
      if (!list) byHome.set(home, (list = []));
      list.push(slot);
    });
    const groups: Group[] = [];
    for (const [home, list] of byHome) for (let at = 0; at < list.length; at += size) groups.push(newGroup(list.slice(at, at + size), home));
    return groups;
  }

  /** Reads every member's `/metrics` (load-aware routing). */
  async scrape(signal: AbortSignal, meter: Meter): Promise<void> {
    await Promise.all(this.members.map(async (m) => this.loads.set(m.slot, await readLoad(this.pool, m.slot, signal, meter))));
  }

  /**
   * The endpoint for a group: its home while that is healthy and untried, else the least loaded
   * healthy one it has not failed on, else one it failed on before that is healthy again; a benched
   * endpoint whose cool-down is over may be probed. None: every endpoint is benched. `home`: a
   * round-robin list waits for its own endpoint; `busy`: every endpoint has its lists.
   */
  pick(group: Group): { member: Member; probe: boolean } | 'busy' | 'home' | null {
    const pool = this.pool;
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

  /**
   * Whether an endpoint has batch work enough. Routed: BATCHES_PER_ENDPOINT lists, so the queue goes to
   * whoever is free. Round-robin: two full lists' worth of prompts (at least one list) — more than a
   * server runs at once, so it never waits for work, while the rest of its lists wait here, not in its
   * queue: the answers in flight (and the client's memory) stay proportional to the swarm, not to the input.
   */
  full(slot: number): boolean {
    if (this.shape === 'chat') return false;
    const flights = this.flights.get(slot) ?? 0;
    if (this.route !== 'round-robin') return flights >= BATCHES_PER_ENDPOINT;
    return flights > 0 && this.load.get(slot)! >= BATCHES_PER_ENDPOINT * this.pool.options.maxPromptsPerRequest;
  }

  /** Members with nothing in flight that take requests now: where a slow request's prompts may go too. */
  idle(now: number): Member[] {
    return this.members.filter((m) => this.load.get(m.slot) === 0 && this.pool.admits(m.slot, now) === 'yes');
  }

  /** A request left for this endpoint carrying `prompts` prompts. */
  left(slot: number, prompts: number): void {
    this.flights.set(slot, (this.flights.get(slot) ?? 0) + 1);
    this.load.set(slot, this.load.get(slot)! + prompts);
    this.inFlight += prompts;
  }

  /** …and is through. */
  back(slot: number, prompts: number): void {
    this.flights.set(slot, this.flights.get(slot)! - 1);
    this.load.set(slot, this.load.get(slot)! - prompts);
    this.inFlight -= prompts;
  }

  /** A request on this endpoint took `ms`: its pace moves toward it. */
  took(slot: number, ms: number): void {
    const pace = this.paces.get(slot);
    const next = pace === undefined ? ms : 0.8 * pace + 0.2 * ms;
    this.paces.set(slot, next);
    this.paceSum += next - (pace ?? 0);
  }

  /** An endpoint's recent time per request relative to the average endpoint's; 1 until it is known. */
  private pace(m: Member): number {
    const mine = this.paces.get(m.slot);
    return mine === undefined ? 1 : mine / (this.paceSum / this.paces.size);
  }

  /** Prefix-aware routing gives way when the prefix's endpoint holds far more than its share. */
  private overloaded(m: Member): boolean {
    if (this.route !== 'prefix-aware') return false;
    return this.load.get(m.slot)! > OVERLOAD_FACTOR * (this.inFlight / this.members.length) + 1;
  }
}

import { RequestFailure } from '../http/failure.ts';
import type { Member } from '../pool/selection.ts';
import type { Slot } from '../run/run.ts';
import { Stragglers } from './stragglers.ts';
import type { Plan } from './dispatch-plan.ts';
import { derive, spread, type Flight, type Group } from './flight.ts';
import type { Placement } from './placement.ts';
import type { Recovery } from './recovery.ts';

/** What watching the requests in flight does through the dispatcher. */
export interface HedgingHost {
  readonly active: ReadonlySet<Flight>;
  hasQueued(): boolean;
  isSettled(slot: Slot): boolean;
  again(group: Group, first: boolean): void;
  free(flight: Flight): void;
  pump(): void;
}

/**
 * The requests in flight, watched: stalled streams are cut, bodies past their deadline too, and a
 * request that hangs or lags while the rest of the swarm is idle has its prompts sent elsewhere as
 * well (a hedge) — the first answer wins, and the loser is aborted.
 */
export class Hedging {
  readonly stragglers: Stragglers;
  /** Requests racing a copy of their prompts: the originals that were hedged, and the hedges. */
  private readonly racing = new Set<Flight>();
  /** When each endpoint last answered a prompt of this dispatch (`performance.now()`). */
  private readonly lastAnswer = new Map<number, number>();

  constructor(
    private readonly plan: Plan,
    private readonly host: HedgingHost,
    private readonly placement: Placement,
    private readonly recovery: Recovery,
  ) {
    this.stragglers = new Stragglers(plan.pool.options, plan.ctx, Boolean(plan.gen.stream));
  }

  /** A request left: a hedge races from the start. */
  launched(flight: Flight): void {
    if (flight.group.hedge) this.racing.add(flight);
  }

  retired(flight: Flight): void {
    this.racing.delete(flight);
  }

  answered(slot: number, now: number): void {
    this.lastAnswer.set(slot, now);
  }

  /** Every WATCH_MS: stalled streams are cut, and hung requests hedged once the rest of the swarm is idle. */
  patrol(): void {
    const now = performance.now();
    const { pool } = this.plan;
    for (const flight of this.host.active) {
      const stall = this.stragglers.stalled(flight, now);
      if (stall) flight.signal.abort(new RequestFailure('stalled', stall));
      // undici's body timeout is per chunk: a body that trickles a byte at a time would never end without this.
      else if (!flight.stream && now > flight.deadline && flight.lastActivity > flight.startedAt) {
        flight.signal.abort(new RequestFailure('timeout', `timed out after ${((now - flight.startedAt) / 1000).toFixed(1)} s: the answer's body was still arriving`));
      }
    }
    if (!pool.options.hedge) return;
    const members = this.placement.members;
    const idle = this.host.hasQueued() ? [] : this.placement.idle(now);
    const moved = new Map<Member, { count: number; why: string }>();
    const overdue = this.stragglers.overdueAfter();
    const lagAfter = idle.length ? this.stragglers.lagAfter() : Infinity;
    // An unstreamed request whose headers came is answered (its body is on the way, or the client is busy): never late.
    const late = (f: Flight) => (f.stream || f.lastActivity === f.startedAt) && now - f.startedAt > overdue;
    const due = [...this.host.active].filter((f) => !f.hedged && (late(f) || Stragglers.lagging(f, lagAfter)));
    // Requests merely slow share the idle endpoints, all at once rather than one per patrol.
    const share = Math.max(1, Math.floor(idle.length / Math.max(1, due.length)));
    for (const flight of due) {
      // Hung: not even headers, and nothing answered on its endpoint since it left, while requests elsewhere finish in a fraction of
      // its time. Its prompts go elsewhere now, and the endpoint gets no more until a probe says it is back.
      const hung = late(flight) && flight.lastActivity === flight.startedAt && (this.lastAnswer.get(flight.member.slot) ?? -Infinity) < flight.startedAt;
      const targets = (hung ? members : idle).filter((m) => m.slot !== flight.member.slot && !flight.group.tried.has(m.slot) && pool.admits(m.slot, now) === 'yes');
      const unanswered = flight.group.slots.filter((s) => !this.host.isSettled(s));
      if (!unanswered.length || !targets.length) continue;
      flight.hedged = true;
      this.racing.add(flight);
      const copy = derive(flight.group, unanswered);
      copy.tried.add(flight.member.slot);
      copy.home = null;
      copy.hedge = true;
      for (const part of spread(unanswered, hung ? targets.length : Math.min(share, targets.length))) this.host.again(derive(copy, part), false);
      const why = late(flight) ? 'no answer in time' : `its tokens come ${(flight.gapMs / flight.gaps / (lagAfter / pool.options.hedgeFactor)).toFixed(1)}× slower than the swarm's`;
      moved.set(flight.member, { count: (moved.get(flight.member)?.count ?? 0) + unanswered.length, why });
      if (hung) this.host.free(flight);
      if (hung && pool.admits(flight.member.slot, now) === 'yes') {
        pool.failed(flight.member.slot, new RequestFailure('stalled', `no answer for ${((now - flight.startedAt) / 1000).toFixed(1)} s while the other endpoints answered`));
      }
    }
    for (const [member, { count, why }] of moved) this.recovery.warnOnce(member, `${member.id}: ${why}; its ${count} unanswered prompt(s) also go to other endpoints (the first answer wins)`);
    if (moved.size) this.host.pump();
  }

  /** Aborts racing requests whose prompts all got their answers elsewhere; an original that lost is benched. */
  settle(): void {
    for (const flight of this.racing) {
      if (!flight.group.slots.every((s) => this.host.isSettled(s))) continue;
      this.racing.delete(flight);
      const slow = flight.hedged ? `answered elsewhere first: no answer after ${((performance.now() - flight.startedAt) / 1000).toFixed(1)} s` : null;
      flight.signal.abort(slow ? new RequestFailure('stalled', slow) : new RequestFailure('cancelled', 'answered elsewhere first'));
    }
  }

  /** Every prompt is answered: the races still running are aborted. */
  abortAll(): void {
    for (const flight of this.racing) flight.signal.abort(new RequestFailure('cancelled', 'answered elsewhere first'));
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import { RequestFailure } from '../http/failure.ts';
import type { Member } from '../pool/selection.ts';
import { nextRetry } from '../pool/retry.ts';
import type { Slot } from '../run/run.ts';
import type { Plan } from './dispatch-plan.ts';
import { derive, spread, type Flight, type Group } from './flight.ts';

/** What recovering from a failed request does through the dispatcher. */
export interface RecoveryHost {
  readonly finished: boolean;
  isSettled(slot: Slot): boolean;
  /** Sends a group again: before the others (a retry, a healed route) or after them (a failover). */
  again(group: Group, first: boolean): void;
  /** Holds a group back until `until` settles (a backoff, a tunnel reconnecting), then `then`. */
  park<T>(until: Promise<T>, then: (value: T) => void): void;
  pump(): void;
  failSlots(slots: readonly Slot[], flight: Flight, error: string): void;
}

/**
 * What happens to a failed request's prompts: failed for their own fault, retried on the same endpoint
 * for what may pass (resets, 429, 502-504; the pool's one retry decision), sent again once a cut route
 * heals, failed over to the healthy endpoints, or held while every endpoint is benched and may come back.
 */
export class Recovery {
  /** A route is being waited for; routes found intact while their endpoint failed. */
  private healing = false;
  private readonly intact = new Set<number>();
  /** Endpoints whose failover was announced since they last answered. */
  private readonly warned = new Set<number>();
  /** Every endpoint is benched: the pump sleeps until the first may be probed again. */
  private benchTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly plan: Plan,
    private readonly host: RecoveryHost,
    private readonly startedAt: number,
  ) {}

  failed(flight: Flight, failure: RequestFailure): void {
    const { pool, ctx } = this.plan;
    const host = this.host;
    const group = flight.group;
    const unanswered = group.slots.filter((s) => !host.isSettled(s));
    if (failure.kind === 'cancelled' || host.finished) {
      if (flight.probe) pool.abandonProbe(flight.member.slot);
      host.pump();
      return;
    }
    if (!failure.endpointFault) {
      // The prompts' own fault (a 4xx), or an answer we cannot read: the same anywhere else.
      if (flight.probe) pool.abandonProbe(flight.member.slot);
      host.failSlots(unanswered, flight, failure.message);
      host.pump();
      return;
    }
    if (!unanswered.length || flight.hedged) {
      // It lost to a hedge, or hedge copies already carry its prompts: its endpoint is not to be trusted
      // for now. Every prompt answered elsewhere first is no failure of it, only slowness.
      if (flight.hedged && !unanswered.length) pool.outrun(flight.member.slot, failure);
      else pool.failed(flight.member.slot, failure);
      host.pump();
      return;
    }
    const rest = derive(group, unanswered);
    // Through a tunnel, a reset or refusal may be the route's (a dead ssh master), not the endpoint's:
    // wait for the route to heal and send again, or fail over if it was not the route.
    if (failure.endpointDown && pool.options.awaitRoute && pool.routed(flight.member.slot)) {
      pool.failed(flight.member.slot, failure);
      host.park(pool.options.awaitRoute(flight.member.id, ctx.signal).catch(() => false), (healed) => {
        if (healed) {
          pool.healed(flight.member.slot);
          rest.home = flight.member;
          host.again(rest, true);
        } else this.failOver(rest, flight, failure);
      });
      return;
    }
    // Another attempt on the same endpoint after a backoff, or fail over now. Timeouts and stalls never wait.
    const tally = { attempts: rest.retries + 1, refusals: rest.refusals + Number(failure.kind === 'refused'), startedAt: rest.firstTryAt };
    const delay = nextRetry(failure, tally, pool.options.retry);
    if (delay !== null) {
      if (flight.probe) pool.abandonProbe(flight.member.slot);
      rest.retries++;
      if (failure.kind === 'refused') rest.refusals++;
      rest.home = flight.member;
      host.park(sleep(delay, true, { ref: true }), () => host.again(rest, true));
      return;
    }
    pool.failed(flight.member.slot, failure);
    this.failOver(rest, flight, failure);
  }

  /** Sends a failed group's unanswered prompts to the healthy endpoints, spread over them, or fails them when none is left. */
  private failOver(group: Group, flight: Flight, failure: RequestFailure): void {
    group.tried.add(flight.member.slot);
    group.failures++;
    group.lastError = failure.message;
    group.retries = 0;
    group.refusals = 0;
    group.home = null;
    const { pool } = this.plan;
    if (!pool.options.failover || group.failures >= pool.options.maxEndpointFailures) {
      this.host.failSlots(group.slots, flight, failure.message);
      this.host.pump();
      return;
    }
    const now = performance.now();
    const healthy = this.plan.selection.members.filter((m) => !group.tried.has(m.slot) && pool.admits(m.slot, now) === 'yes').length;
    for (const part of spread(group.slots, Math.max(1, healthy))) this.host.again(derive(group, part), false);
    // Once per endpoint until it answers again: a thousand failed-over requests make one line, not a thousand.
    this.warnOnce(flight.member, `${flight.member.id}: ${failure.message}; its unanswered prompts go to other endpoints`);
    this.host.pump();
  }

  /** Tells the run of an endpoint's trouble once, until it answers again. */
  warnOnce(member: Member, message: string): void {
    if (this.warned.has(member.slot)) return;
    this.warned.add(member.slot);
    this.plan.ctx.warn(message);
  }

  /** The endpoint answered while it takes requests: its next trouble may be told again (a late answer from a refused one must not repeat its warning). */
  answered(slot: number, now: number): void {
    if (this.warned.size && this.plan.pool.admits(slot, now) === 'yes') this.warned.delete(slot);
  }

  /**
   * Whether a benched endpoint's route (an SSH tunnel) may heal: then one wait for it is under way
   * (one at a time: the tunnel reconnects once for all), and sending resumes when it ends. A route
   * that was intact — the endpoint itself is down — is not asked again.
   */
  mayHeal(): boolean {
    const { pool } = this.plan;
    const members = this.plan.selection.members;
    const awaitRoute = pool.options.awaitRoute;
    if (!awaitRoute) return false;
    if (this.healing) return true;
    const now = performance.now();
    const cut = members.find((m) => pool.routed(m.slot) && pool.admits(m.slot, now) === 'no' && !this.intact.has(m.slot));
    if (!cut) return false;
    this.healing = true;
    this.host.park(awaitRoute(cut.id, this.plan.ctx.signal).catch(() => false), (healed) => {
      this.healing = false;
      if (!healed) return void this.intact.add(cut.slot);
      for (const m of members) if (pool.routed(m.slot) && pool.admits(m.slot, performance.now()) === 'no') pool.healed(m.slot);
    });
    return true;
  }

  /**
   * Whether a group no endpoint will take now may wait for one: when some endpoint is down (gone, not
   * answering with errors), one being probed answers soon (and pumps again), and a benched one may be
   * probed once its cool-down ends — waited for while that is within the retry budget, counted from
   * the group's first try (or the dispatch's start).
   */
  waitForBench(group: Group): boolean {
    const { pool } = this.plan;
    const members = this.plan.selection.members;
    // Only a swarm that is gone (refused, reset: a restart, a lost route) may come back; one that answers with errors is failing.
    if (!members.some((m) => pool.statusOf(m.slot) === 'down' || pool.statusOf(m.slot) === 'tunnel-down')) return false;
    const now = performance.now();
    const reopens = members.map((m) => pool.reopensAt(m.slot));
    if (reopens.some((at) => at <= now)) return true; // a probe is under way
    const soonest = reopens.reduce((a, b) => Math.min(a, b), Infinity);
    const budget = pool.options.retry.budgetMs;
    if (soonest - (group.firstTryAt || this.startedAt) > budget) return false;
    if (!this.benchTimer) {
      this.plan.ctx.warn(`every endpoint serving ${this.plan.selection.model} is benched after failing; waiting ${((soonest - now) / 1000).toFixed(1)} s for one to be tried again (up to ${(budget / 1000).toFixed(0)} s from a prompt's first try)`);
      this.benchTimer = setTimeout(() => {
        this.benchTimer = undefined;
        this.host.pump();
      }, soonest - now + 1);
    }
    return true;
  }

  /** Why a group no endpoint will take fails (members name root slots: a sub-pool's `endpoints` are indexed from 0). */
  noneLeft(group: Group): string {
    const { pool, selection } = this.plan;
    const reasons = [...new Set(selection.members.map((m) => pool.reasonOf(m.slot)).filter((r): r is string => Boolean(r)))];
    const why = `every endpoint serving ${selection.model} is down or benched${reasons.length ? ` (${reasons.slice(0, 3).join('; ')}${reasons.length > 3 ? '; …' : ''})` : ''}`;
    return group.failures ? `${group.lastError ?? 'failed'}, then ${why}` : why;
  }

  stop(): void {
    clearTimeout(this.benchTimer);
  }
}

import { EventEmitter } from 'node:events';
import { Breaker, type CoolDown } from './breaker.ts';
import { endpointId, type Endpoint } from '../endpoints/endpoint.ts';
import type { RequestFailure } from '../http/failure.ts';
import type { ServedModel } from '../endpoints/models.ts';

/**
 * The one status vocabulary of an endpoint: `degraded` answers but fails (5xx, stalls) and is
 * benched from runs for a cool-down; `down` refuses or resets; `tunnel-down` its route is gone.
 */
export type EndpointHealth = 'unknown' | 'up' | 'degraded' | 'down' | 'tunnel-down';

/** What a look from outside a run (a health check, the tunnel) found of an endpoint that is not up: its status, and why. */
export interface HealthOutcome {
  status: Exclude<EndpointHealth, 'unknown' | 'up'>;
  reason: string;
}

export interface EndpointState {
  readonly slot: number;
  readonly endpoint: Endpoint;
  readonly id: string;
  status: EndpointHealth;
  reason: string | null;
  /** null until looked up, or when the server has no usable `/v1/models`. */
  models: ServedModel[] | null;
  /** Run requests it answered, and failed (after retries), over this pool's life: its failure rate. */
  answered: number;
  failures: number;
  /** Requests that lost to a hedge: their prompts were answered elsewhere first (slow, not failed). */
  outrun: number;
}

/**
 * What the pool knows of each endpoint's health, and its circuit breaker: runs, lookups, health
 * checks and tunnels write here; the views subscribe through `onStatus`.
 */
export class EndpointStates {
  readonly states: EndpointState[];
  private readonly breakers: Breaker[];
  private readonly events = new EventEmitter();

  constructor(endpoints: readonly Endpoint[], coolDown: CoolDown) {
    this.states = endpoints.map((endpoint, slot) => ({
      slot,
      endpoint,
      id: endpointId(endpoint),
      status: 'unknown',
      reason: null,
      models: null,
      answered: 0,
      failures: 0,
      outrun: 0,
    }));
    this.breakers = this.states.map(() => new Breaker(coolDown));
  }

  /** Called with the endpoint's state whenever it turns up or down. Returns an unsubscribe. */
  onStatus(listener: (state: Readonly<EndpointState>) => void): () => void {
    this.events.on('status', listener);
    return () => this.events.off('status', listener);
  }

  /** Whether a run may send to this endpoint now: `probe` means one request may test a benched one. */
  admits(slot: number, now: number): 'yes' | 'probe' | 'no' {
    return this.breakers[slot]!.admits(now);
  }

  /** When a benched endpoint may be probed again (`performance.now()` clock; in the past when it may now, or is being probed). */
  reopensAt(slot: number): number {
    return this.breakers[slot]!.reopensAt;
  }

  startProbe(slot: number): void {
    this.breakers[slot]!.startProbe();
  }

  abandonProbe(slot: number): void {
    this.breakers[slot]!.abandonProbe();
  }

  /** A generation request went through: the endpoint is healthy (again). */
  succeeded(slot: number): void {
    this.states[slot]!.answered++;
    this.healed(slot);
  }

  /** The endpoint failed a request: benched for a cool-down, `down` when gone, `degraded` when sick. */
  failed(slot: number, failure: RequestFailure): void {
    this.states[slot]!.failures++;
    this.bench(slot, outcomeOf(failure), failure.permanent);
  }

  /** A hedge answered its request's prompts first: benched as slow for now, counted apart from failures (nothing was lost). */
  outrun(slot: number, failure: RequestFailure): void {
    this.states[slot]!.outrun++;
    this.bench(slot, outcomeOf(failure), failure.permanent);
  }

  /** Benched for a cool-down (for good when `permanent`) in the status found; a health check or the tunnel count no run's failure. */
  bench(slot: number, outcome: HealthOutcome, permanent = false): void {
    this.breakers[slot]!.failed(performance.now(), permanent);
    this.set(slot, outcome.status, outcome.reason);
  }

  /** Its route carries traffic again (a tunnel reconnected), or it answered: back in at once, unless benched for good. */
  healed(slot: number): void {
    if (this.breakers[slot]!.succeeded()) this.set(slot, 'up', null);
  }

  /** Nothing known any more (after a tunnel reconnects): the next run looks again. */
  forget(slot: number): void {
    this.states[slot]!.models = null;
    this.breakers[slot]!.succeeded();
    this.set(slot, 'unknown', null);
  }

  set(slot: number, status: EndpointHealth, reason: string | null): void {
    const state = this.states[slot]!;
    if (state.status === status && state.reason === reason) return;
    state.status = status;
    state.reason = reason;
    this.events.emit('status', state);
  }
}

/** The status a run's failed request leaves its endpoint in: gone (`down`), its route gone, or answering but sick (`degraded`). */
function outcomeOf(failure: RequestFailure): HealthOutcome {
  const status = failure.kind === 'tunnel' ? 'tunnel-down' : failure.endpointDown || failure.permanent ? 'down' : 'degraded';
  return { status, reason: failure.message };
}

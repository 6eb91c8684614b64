import pLimit from 'p-limit';
import type { EndpointClient } from '../http/endpoint-client.ts';
import { RequestFailure } from '../http/failure.ts';
import { Unbilled, type Meter } from '../http/request-meter.ts';
import { parseModelList, servedModels } from '../endpoints/models.ts';
import type { PoolOptions } from './options.ts';
import { withRetries } from './retry.ts';
import type { EndpointStates } from './endpoint-states.ts';

/** Model lookups in flight at once over the swarm. */
const LOOKUPS_AT_ONCE = 256;

/** What the pool asks each server once for its life: `GET /v1/models` and `GET /version`. */
export class ServerLookups {
  private readonly lookups = new Map<number, { done: Promise<void>; cost: Unbilled }>();
  /** Lookups in flight at once (not counting their retries' waits): 10,000 at once held ~500 MB of sockets and pools. */
  private readonly limit = pLimit(LOOKUPS_AT_ONCE);
  private readonly versions = new Map<number, Promise<string | null>>();

  constructor(
    private readonly states: EndpointStates,
    private readonly clients: readonly EndpointClient[],
    private readonly options: PoolOptions,
  ) {}

  /**
   * `GET /v1/models` once per endpoint for the pool's lifetime (never once per prompt). Its requests
   * are counted by the first meter that awaits it (the run it served, even when asked before the run).
   */
  models(slot: number, meter?: Meter): Promise<void> {
    let lookup = this.lookups.get(slot);
    if (!lookup) {
      const cost = new Unbilled();
      lookup = { done: this.fetchModels(slot, cost), cost };
      this.lookups.set(slot, lookup);
    }
    lookup.cost.billTo(meter);
    return lookup.done;
  }

  /**
   * The lookup itself ignores the caller's cancel (it is bounded by its timeout and shared by every
   * later run): 10,000 lookups each listening to one run's signal cost O(n²) in EventTarget's
   * listener list — 34 % of a 10,000-endpoint start.
   */
  private async fetchModels(slot: number, meter: Meter): Promise<void> {
    const state = this.states.states[slot]!;
    const policy = { ...this.options.retry, maxAttempts: 2, retryTimeouts: true, refusedRetries: 0 };
    try {
      const { value } = await withRetries(policy, new AbortController().signal, () =>
        this.limit(async () => {
          const client = this.clients[slot]!;
          await client.reachable();
          return client.json('GET', '/v1/models', undefined, this.options.lookupTimeoutMs, undefined, { meter });
        }),
      );
      state.models = servedModels(state.endpoint, parseModelList(value.body));
      this.states.set(slot, 'up', null);
    } catch (err) {
      const failure = RequestFailure.from(err);
      // A server without a usable /v1/models (older or non-vLLM) can still generate; one that
      // refuses, resets, times out or rejects our key cannot.
      const usable = failure.kind === 'protocol' || failure.garbled || (failure.kind === 'http' && failure.status === 404);
      if (usable) {
        state.models = servedModels(state.endpoint, null);
        this.states.set(slot, 'up', null);
      } else {
        this.states.set(slot, failure.kind === 'tunnel' ? 'tunnel-down' : 'down', failure.message);
        // No run will use it until it is looked up again: its connections need not be held.
        this.clients[slot]!.release();
      }
    }
  }

  /** `GET /version` once per endpoint; null when it does not say (older or non-vLLM servers). */
  version(slot: number, meter?: Meter): Promise<string | null> {
    let pending = this.versions.get(slot);
    if (!pending) {
      pending = this.limit(() => this.clients[slot]!.json<{ version?: unknown }>('GET', '/version', undefined, this.options.lookupTimeoutMs, undefined, { meter })).then(
        ({ body }) => (typeof body.version === 'string' ? body.version : null),
        () => null,
      );
      this.versions.set(slot, pending);
    }
    return pending;
  }

  forget(slot: number): void {
    this.lookups.delete(slot);
    this.versions.delete(slot);
  }
}

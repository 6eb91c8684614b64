import type { Endpoint } from '../endpoints/endpoint.ts';
import type { RequestSignal } from '../http/abort.ts';
import type { Exchange, ExchangeExtras } from '../http/endpoint-client.ts';
import type { RequestFailure } from '../http/failure.ts';
import type { Meter } from '../http/request-meter.ts';
import { DEFAULT_POOL_OPTIONS, type GenerationOptions, type PoolOptions } from './options.ts';
import { Batcher } from './batching.ts';
import { EndpointStates, type EndpointHealth, type EndpointState, type HealthOutcome } from './endpoint-states.ts';
import { ServerLookups } from './lookups.ts';
import { requestCap, type Capped } from './request-cap.ts';
import { selectMembers, type Member, type Selection } from './selection.ts';
import { Transport, type SendCall, type SendSink, type Shape } from './transport.ts';


/**
 * The only thing that speaks HTTP to the swarm: one dispatcher per endpoint, one concurrency cap
 * for the whole pool, model lookups once per endpoint, retries. Batch and individual requests are
 * two shapes of the same pool. A facade over its parts (pool/): the endpoints' states and breakers,
 * the server lookups, choosing a run's endpoints, batching, and the transport.
 */
export class SwarmPool {
  readonly options: PoolOptions;
  readonly limit: Capped;
  private readonly health: EndpointStates;
  private readonly transport: Transport;
  private readonly lookups: ServerLookups;
  private readonly batcher: Batcher;
  /** A sub-pool's endpoints, as slots of the pool it narrows, in the sub-pool's order; null: all of them. */
  private view: readonly number[] | null = null;

  constructor(endpoints: readonly Endpoint[], options: Partial<PoolOptions> = {}) {
    this.options = { ...DEFAULT_POOL_OPTIONS, ...options };
    this.limit = requestCap(this.options.concurrency);
    this.health = new EndpointStates(endpoints, this.options.coolDown);
    this.transport = new Transport(this.health.states, this.options);
    this.lookups = new ServerLookups(this.health, this.transport.clients, this.options);
    this.batcher = new Batcher(this.transport, this.options);
  }

  /** This pool's endpoints; a sub-pool's are indexed from 0 (their `slot` stays the root pool's). */
  get endpoints(): readonly Readonly<EndpointState>[] {
    const states = this.health.states;
    return this.view ? this.view.map((slot) => states[slot]!) : states;
  }

  /**
   * A sub-pool of these slots: the same object underneath (connections, concurrency limit, breakers,
   * endpoint health, model lookups), but runs on it pick only among these endpoints.
   */
  narrow(slots: readonly number[]): SwarmPool {
    const sub = Object.create(this) as SwarmPool;
    sub.view = [...slots];
    return sub;
  }

  /**
   * The same pool (connections, health, lookups, endpoints) with its own cap on requests in flight:
   * a comparison's individual arm fills the servers' slots without changing the pool its batched arm uses.
   */
  withConcurrency(concurrency: number): SwarmPool {
    const sub = Object.create(this) as SwarmPool;
    Object.assign(sub, { options: { ...this.options, concurrency }, limit: requestCap(concurrency) });
    return sub;
  }

  /** Called with the endpoint's state whenever it turns up or down. Returns an unsubscribe. */
  onStatus(listener: (state: Readonly<EndpointState>) => void): () => void {
    return this.health.onStatus(listener);
  }

  /** Records that an endpoint (or the tunnel to it) was found not up outside a run (a health check, the tunnel); its later prompts go elsewhere. */
  markDown(slot: number, outcome: HealthOutcome): void {
    this.health.bench(slot, outcome);
  }

  /** Whether a run may send to this endpoint now: `probe` means one request may test a benched one. */
  admits(slot: number, now: number): 'yes' | 'probe' | 'no' {
    return this.health.admits(slot, now);
  }

  /** The endpoint is reached through a route of its own (a tunnel's forward or proxy), not dialled directly. */
  routed(slot: number): boolean {
    return this.options.routes?.has(this.health.states[slot]!.id) ?? false;
  }

  /** An endpoint's status by its slot in the root pool (a sub-pool's `endpoints` are indexed from 0). */
  statusOf(slot: number): EndpointHealth {
    return this.health.states[slot]!.status;
  }

  /** Why an endpoint is not up, by its slot in the root pool; null when nothing went wrong. */
  reasonOf(slot: number): string | null {
    return this.health.states[slot]!.reason;
  }

  /** When a benched endpoint may be probed again (`performance.now()` clock; in the past when it may now, or is being probed). */
  reopensAt(slot: number): number {
    return this.health.reopensAt(slot);
  }

  startProbe(slot: number): void {
    this.health.startProbe(slot);
  }

  abandonProbe(slot: number): void {
    this.health.abandonProbe(slot);
  }

  /** A generation request went through: the endpoint is healthy (again). */
  succeeded(slot: number): void {
    this.health.succeeded(slot);
  }

  /** The endpoint failed a request: benched for a cool-down, `down` when gone, `degraded` when sick. */
  failed(slot: number, failure: RequestFailure): void {
    this.health.failed(slot, failure);
  }

  /** A hedge answered its request's prompts first: benched as slow for now, counted apart from failures (nothing was lost). */
  outrun(slot: number, failure: RequestFailure): void {
    this.health.outrun(slot, failure);
  }

  /** Its route carries traffic again (a tunnel reconnected): back in at once. */
  healed(slot: number): void {
    this.health.healed(slot);
  }

  /** Forgets what is known of these endpoints (after a tunnel reconnects), so the next run looks again. */
  forget(slots: readonly number[] = this.health.states.map((s) => s.slot)): void {
    for (const slot of slots) {
      this.lookups.forget(slot);
      this.batcher.forget(slot);
      this.health.forget(slot);
    }
  }

  /**
   * A `GET` of one of a server's own routes (`/health`, `/v1/models`, `/metrics`) over the endpoint's
   * route, with its deadline (and `extras`' meter and size cap). Health checks, load readings and the
   * tree's "Open /metrics" ask through here: every request to the swarm leaves through the pool.
   */
  get(slot: number, path: string, timeoutMs: number, signal?: RequestSignal, extras?: ExchangeExtras): Promise<Exchange<string>> {
    return this.transport.clients[slot]!.send('GET', path, undefined, timeoutMs, signal, extras);
  }

  /** `get` of a JSON route: a non-2xx answer or a body that is not JSON fails as the client says. */
  getJson<T>(slot: number, path: string, timeoutMs: number, signal?: RequestSignal, extras?: ExchangeExtras): Promise<Exchange<T>> {
    return this.transport.clients[slot]!.json<T>('GET', path, undefined, timeoutMs, signal, extras);
  }

  /**
   * `GET /v1/models` once per endpoint for the pool's lifetime (never once per prompt). Its requests
   * are counted by the first meter that awaits it (the run it served, even when asked before the run).
   */
  lookupModels(slot: number, meter?: Meter): Promise<void> {
    return this.lookups.models(slot, meter);
  }

  /** Endpoints for a run: tag filter, reachable, serving the chosen model. Warns about those left out. `meter` counts the lookups. */
  select(gen: GenerationOptions, tags: ReadonlyArray<[string, string]>, signal: AbortSignal, exclude: readonly string[] = [], meter?: Meter): Promise<Selection> {
    return selectMembers(this, gen, tags, signal, exclude, meter);
  }

  /** The server versions these endpoints report (`GET /version`, asked once per endpoint), distinct and sorted. */
  async serverVersions(): Promise<string[]> {
    const versions = await Promise.all(this.endpoints.map((e) => this.version(e.slot)));
    return [...new Set(versions.filter((v): v is string => v !== null))].sort();
  }

  /** `GET /version` once per endpoint; null when it does not say (older or non-vLLM servers). */
  version(slot: number, meter?: Meter): Promise<string | null> {
    return this.lookups.version(slot, meter);
  }

  /**
   * One request's worth of prompts to one endpoint, the pool's batching in one place: `chat` sends
   * one prompt to `/v1/chat/completions`; `batch` sends the list to `/v1/completions`, split to the
   * endpoint's prompt-list cap (ours, or a lower one learned from its 400), and a list the server
   * rejects as a client error is bisected so only the offending prompts fail, each with the server's
   * own message. Answers reach `sink` as they become final (streamed: at each finish_reason).
   * Rejects for what is not the prompts' fault (a RequestFailure; read anything else through
   * `RequestFailure.from`); prompts not answered by then are the caller's to send elsewhere.
   */
  send(member: Member, model: string, prompts: readonly string[], shape: Shape, gen: GenerationOptions, call: SendCall, sink: SendSink): Promise<void> {
    return this.batcher.send(member, model, prompts, shape, gen, call, sink);
  }

  /** Groups a batch run's prompts as Aurora-Swarm's send_all_batched: prompt i to member i mod n, each group cut at the prompt-list cap. */
  groupBatches<T>(items: readonly T[], members: readonly Member[]): Array<{ member: Member; items: T[] }> {
    return this.batcher.groupBatches(items, members);
  }

  /** Aurora-Swarm's wave-scaled batch timeout: max(timeout, ceil(n / maxNumSeqs) · per-sequence), optionally capped. */
  batchTimeoutMs(sequences: number): number {
    return this.transport.batchTimeoutMs(sequences);
  }

  async close(): Promise<void> {
    if (this.view) return; // a sub-pool borrows its parent's connections; the parent closes them
    await this.transport.close();
  }
}

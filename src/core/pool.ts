import { EventEmitter } from 'node:events';
import pLimit, { type LimitFunction } from 'p-limit';
import { endpointId, matchesTags, type Endpoint } from './endpoint.ts';
import { directRoute } from './http/base-url.ts';
import type { RequestSignal } from './http/abort.ts';
import { EndpointClient, type Exchange, type ExchangeExtras, type StreamTimes } from './http/endpoint-client.ts';
import { RequestFailure } from './http/failure.ts';
import { FALLBACK_MAX_MODEL_LEN, parseModelList, servedModels, sizeMaxTokens, type ServedModel } from './models.ts';
import { DEFAULT_POOL_OPTIONS, type GenerationOptions, type PoolOptions } from './options.ts';
import { checkExtra } from './generation-params.ts';
import { batchPath, CHAT_BATCH, chatBatchBody, chatBody, completionsBody, RAW, readChat, readChatBatch, readCompletions, readUsage, renderedAnswer, type Answer, type Rendering, type Usage, type WirePrompt } from './request-shapes.ts';
import { Unbilled, type Meter } from './http/request-meter.ts';
import { StreamAnswers } from './stream-answers.ts';
import { Breaker } from './breaker.ts';
import { embeddingsBody, readEmbeddings } from './embeddings.ts';
import { guidedFields, guidedWarning } from './guided.ts';
import { withRetries } from './retry.ts';
import { speaksHarmony } from './templating/harmony.ts';
import { chatMessages, templateKwargs } from './templating/messages.ts';
import { ServerRenderer, type PlanRequest, type PreparedPlan } from './templating/server-render.ts';
import { fill } from './templating/skeleton.ts';
import type { FileTemplate } from './templating/setting.ts';
import { FileRenderer } from './templating/template-file.ts';

/**
 * The one status vocabulary of an endpoint: `degraded` answers but fails (5xx, stalls) and is
 * benched from runs for a cool-down; `down` refuses or resets; `tunnel-down` its route is gone.
 */
export type EndpointHealth = 'unknown' | 'up' | 'degraded' | 'down' | 'tunnel-down';

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

/** An endpoint taking part in one run, with what the run needs to size requests for it. */
export interface Member {
  readonly slot: number;
  readonly id: string;
  readonly maxModelLen: number;
}

export interface Selection {
  model: string;
  members: Member[];
  warnings: string[];
}

/** What a run lends every call: its cancel signal, and the meter that counts every request sent for it. */
export interface CallContext extends Meter {
  signal: AbortSignal;
}

/** `/v1/chat/completions` with one prompt, `/v1/completions` with a list, or `/v1/embeddings` with a list. */
export type Shape = 'chat' | 'batch' | 'embed';

/** When an answer's request left and its response headers arrived (`performance.now()`). */
export interface SentTimes {
  sentAt: number;
  firstByteAt: number;
}

/** What one `send` call lends the pool: the request's abort signal, the run's meter, and where notes go. */
export interface SendCall extends Meter {
  signal: RequestSignal;
  stream?: boolean;
  /** Something the run should know once (a batch that took a costlier path to the chat template, and why). */
  note(message: string): void;
  /** Called with `performance.now()` at the headers (and, streamed, each event): stalls and hung endpoints are told by it. */
  onActivity?(at: number): void;
}

/** Where a `send` call's outcomes go; `i` is the prompt's position in the list sent. */
export interface SendSink {
  onAnswer(i: number, answer: Answer, times: SentTimes): void;
  /** The server rejected this prompt itself (a 400 isolated by bisection). */
  onPromptError(i: number, failure: RequestFailure): void;
  /** `own`: the usage covers one prompt alone, so it is that prompt's. */
  onUsage(usage: Usage, own: boolean): void;
  onGap(ms: number): void;
  /** A generation request carrying prompt `i` was written (once per request: retries, halves and keys renewed each count). */
  onCarried(i: number): void;
}

/** Model lookups in flight at once over the swarm. */
const LOOKUPS_AT_ONCE = 256;

/** `param`s vLLM names for errors about a prompt's own content (context length, its tokens). */
const PROMPT_PARAMS = new Set(['prompt', 'input_tokens', 'messages', 'max_tokens', 'max_completion_tokens', 'prompt_embeds']);

/** A run cannot start: no endpoint fits. The message says what there is instead. */
export class SelectionError extends Error {
  override name = 'SelectionError';
}

/**
 * The only thing that speaks HTTP to the swarm: one dispatcher per endpoint, one concurrency cap
 * for the whole pool, model lookups once per endpoint, retries. Batch and individual requests are
 * two shapes of the same pool.
 */
export class SwarmPool {
  readonly options: PoolOptions;
  readonly limit: LimitFunction;
  private readonly states: EndpointState[];
  private readonly clients: EndpointClient[];
  private readonly lookups = new Map<number, { done: Promise<void>; cost: Unbilled }>();
  /** Lookups in flight at once (not counting their retries' waits): 10,000 at once held ~500 MB of sockets and pools. */
  private readonly lookupLimit = pLimit(LOOKUPS_AT_ONCE);
  private readonly versions = new Map<number, Promise<string | null>>();
  private readonly learnedCaps = new Map<number, number>();
  private readonly events = new EventEmitter();
  private readonly breakers: Breaker[];
  private readonly renderer: ServerRenderer;
  private readonly fileRenderers = new WeakMap<FileTemplate, FileRenderer>();
  /** A sub-pool's endpoints, as slots of the pool it narrows, in the sub-pool's order; null: all of them. */
  private view: readonly number[] | null = null;

  constructor(endpoints: readonly Endpoint[], options: Partial<PoolOptions> = {}) {
    this.options = { ...DEFAULT_POOL_OPTIONS, ...options };
    this.limit = pLimit(this.options.concurrency);
    const headers: Record<string, string> = { 'user-agent': 'swarm-lab' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
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
    this.breakers = this.states.map(() => new Breaker(this.options.coolDown));
    this.clients = this.states.map((s) => {
      const route = this.options.routes?.get(s.id) ?? directRoute(s.endpoint, this.options.caCertificates);
      return new EndpointClient(
        route,
        { connections: this.options.connectionsPerEndpoint, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 10_000 },
        headers,
        s.id,
        this.options.credentials?.get(s.id),
      );
    });
    this.renderer = new ServerRenderer((slot) => this.clients[slot]!, this.options.lookupTimeoutMs);
  }

  /** This pool's endpoints; a sub-pool's are indexed from 0 (their `slot` stays the root pool's). */
  get endpoints(): readonly Readonly<EndpointState>[] {
    return this.view ? this.view.map((slot) => this.states[slot]!) : this.states;
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
    Object.assign(sub, { options: { ...this.options, concurrency }, limit: pLimit(concurrency) });
    return sub;
  }

  /** Called with the endpoint's state whenever it turns up or down. Returns an unsubscribe. */
  onStatus(listener: (state: Readonly<EndpointState>) => void): () => void {
    this.events.on('status', listener);
    return () => this.events.off('status', listener);
  }

  /** Records that an endpoint (or the tunnel to it) failed outside a run (a health check, the tunnel); its later prompts go elsewhere. */
  markDown(slot: number, failure: RequestFailure): void {
    this.bench(slot, failure);
  }

  /** Whether a run may send to this endpoint now: `probe` means one request may test a benched one. */
  admits(slot: number, now: number): 'yes' | 'probe' | 'no' {
    return this.breakers[slot]!.admits(now);
  }

  /** The endpoint is reached through a route of its own (a tunnel's forward or proxy), not dialled directly. */
  routed(slot: number): boolean {
    return this.options.routes?.has(this.states[slot]!.id) ?? false;
  }

  /** An endpoint's status by its slot in the root pool (a sub-pool's `endpoints` are indexed from 0). */
  statusOf(slot: number): EndpointHealth {
    return this.states[slot]!.status;
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
    if (this.breakers[slot]!.succeeded()) this.setStatus(this.states[slot]!, 'up', null);
  }

  /** The endpoint failed a request: benched for a cool-down, `down` when gone, `degraded` when sick. */
  failed(slot: number, failure: RequestFailure): void {
    this.states[slot]!.failures++;
    this.bench(slot, failure);
  }

  /** A hedge answered its request's prompts first: benched as slow for now, counted apart from failures (nothing was lost). */
  outrun(slot: number, failure: RequestFailure): void {
    this.states[slot]!.outrun++;
    this.bench(slot, failure);
  }

  private bench(slot: number, failure: RequestFailure): void {
    this.breakers[slot]!.failed(failure, performance.now());
    const status = failure.kind === 'tunnel' ? 'tunnel-down' : failure.endpointDown || failure.permanent ? 'down' : 'degraded';
    this.setStatus(this.states[slot]!, status, failure.message);
  }

  /** Its route carries traffic again (a tunnel reconnected): back in at once. */
  healed(slot: number): void {
    if (this.breakers[slot]!.succeeded()) this.setStatus(this.states[slot]!, 'up', null);
  }

  /** Forgets what is known of these endpoints (after a tunnel reconnects), so the next run looks again. */
  forget(slots: readonly number[] = this.states.map((s) => s.slot)): void {
    for (const slot of slots) {
      this.lookups.delete(slot);
      this.learnedCaps.delete(slot);
      this.renderer.forget(slot);
      this.versions.delete(slot);
      const state = this.states[slot]!;
      state.models = null;
      this.breakers[slot]!.succeeded();
      this.setStatus(state, 'unknown', null);
    }
  }

  /**
   * A `GET` of one of a server's own routes (`/health`, `/v1/models`, `/metrics`) over the endpoint's
   * route, with its deadline (and `extras`' meter and size cap). Health checks, load readings and the
   * tree's "Open /metrics" ask through here: every request to the swarm leaves through the pool.
   */
  get(slot: number, path: string, timeoutMs: number, signal?: RequestSignal, extras?: ExchangeExtras): Promise<Exchange<string>> {
    return this.clients[slot]!.send('GET', path, undefined, timeoutMs, signal, extras);
  }

  /** `get` of a JSON route: a non-2xx answer or a body that is not JSON fails as the client says. */
  getJson<T>(slot: number, path: string, timeoutMs: number, signal?: RequestSignal, extras?: ExchangeExtras): Promise<Exchange<T>> {
    return this.clients[slot]!.json<T>('GET', path, undefined, timeoutMs, signal, extras);
  }

  /**
   * `GET /v1/models` once per endpoint for the pool's lifetime (never once per prompt). Its requests
   * are counted by the first meter that awaits it (the run it served, even when asked before the run).
   */
  lookupModels(slot: number, meter?: Meter): Promise<void> {
    let lookup = this.lookups.get(slot);
    if (!lookup) {
      const cost = new Unbilled();
      lookup = { done: this.fetchModels(this.states[slot]!, cost), cost };
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
  private async fetchModels(state: EndpointState, meter: Meter): Promise<void> {
    const policy = { ...this.options.retry, maxAttempts: 2, retryTimeouts: true };
    try {
      const { value } = await withRetries(policy, new AbortController().signal, () =>
        this.lookupLimit(() => this.clients[state.slot]!.json('GET', '/v1/models', undefined, this.options.lookupTimeoutMs, undefined, { meter })),
      );
      state.models = servedModels(state.endpoint, parseModelList(value.body));
      this.setStatus(state, 'up', null);
    } catch (err) {
      const failure = RequestFailure.from(err);
      // A server without a usable /v1/models (older or non-vLLM) can still generate; one that
      // refuses, resets, times out or rejects our key cannot.
      const usable = failure.kind === 'protocol' || failure.garbled || (failure.kind === 'http' && failure.status === 404);
      if (usable) {
        state.models = servedModels(state.endpoint, null);
        this.setStatus(state, 'up', null);
      } else {
        this.setStatus(state, failure.kind === 'tunnel' ? 'tunnel-down' : 'down', failure.message);
        // No run will use it until it is looked up again: its connections need not be held.
        this.clients[state.slot]!.release();
      }
    }
  }

  /** Endpoints for a run: tag filter, reachable, serving the chosen model. Warns about those left out. `meter` counts the lookups. */
  async select(gen: GenerationOptions, tags: ReadonlyArray<[string, string]>, signal: AbortSignal, exclude: readonly string[] = [], meter?: Meter): Promise<Selection> {
    checkExtra(gen.extra);
    if (!this.endpoints.length) throw new SelectionError('the (sub-)pool has no endpoints');
    const left = new Set(exclude);
    const tagged = this.endpoints.filter((s) => matchesTags(s.endpoint, tags) && !left.has(s.id));
    if (!tagged.length && left.size) throw new SelectionError(`every endpoint${tags.length ? ' with those tags' : ''} is excluded from runs`);
    if (!tagged.length) {
      const present = [...new Set(this.endpoints.flatMap((s) => Object.entries(s.endpoint.tags).map(([k, v]) => `${k}=${v}`)))];
      const wanted = tags.map(([k, v]) => `${k}=${v}`).join(', ');
      throw new SelectionError(`no endpoint has tag ${wanted}; tags in the hostfile: ${present.join(', ') || '(none)'}`);
    }
    await untilAborted(Promise.all(tagged.map((s) => this.lookupModels(s.slot, meter))), signal);
    const warnings: string[] = [];
    // A degraded endpoint is benched, not gone: the run's breaker probes it after its cool-down.
    const up = tagged.filter((s) => s.status === 'up' || s.status === 'degraded');
    const down = tagged.filter((s) => !up.includes(s));
    if (!up.length) throw new SelectionError(`no endpoint is usable: ${listed(down, describeDown)}`);
    if (down.length) warnings.push(`left out ${down.length.toLocaleString('en-US')} endpoint(s) that cannot be used: ${listed(down, describeDown)}`);

    // Unnamed, the model is the first listed, by a generation server before an embedding one (tagged role=embed).
    const listing = up.filter((s) => s.models?.length).sort((x, y) => Number(x.endpoint.tags.role === 'embed') - Number(y.endpoint.tags.role === 'embed'));
    const model = gen.model || listing[0]?.models![0]!.id;
    if (!model) throw new SelectionError('no endpoint lists a model in /v1/models; name one with --model');
    const serving = up.filter((s) => s.models === null || s.models.some((m) => m.id === model));
    const others = up.filter((s) => !serving.includes(s));
    if (!serving.length) {
      throw new SelectionError(`no endpoint serves model "${model}"; served: ${describeServed(up)}`);
    }
    if (others.length) {
      warnings.push(`left out ${others.length} endpoint(s) that do not serve "${model}": ${listed(others, (s) => `${s.id} (${s.models!.map((m) => m.id).join(', ')})`)}`);
    }
    const unsized = serving.filter((s) => maxModelLenOf(s, model) === null);
    if (unsized.length && gen.maxTokens === undefined) {
      warnings.push(
        `max_model_len unknown for ${listed(unsized, (s) => s.id)}: sizing max_tokens for ${FALLBACK_MAX_MODEL_LEN} tokens of context (set --max-tokens to choose)`,
      );
    }
    const members = serving.map((s) => ({ slot: s.slot, id: s.id, maxModelLen: maxModelLenOf(s, model) ?? FALLBACK_MAX_MODEL_LEN }));
    // Every prompt would be refused by every endpoint (vLLM checks prompt + max_tokens against the context): say so before sending any.
    const widest = serving.reduce((m, s) => Math.max(m, maxModelLenOf(s, model) ?? Infinity), 0);
    if (gen.maxTokens !== undefined && gen.maxTokens >= widest) {
      throw new SelectionError(`max_tokens ${gen.maxTokens} leaves no room for a prompt: ${model}'s context (max_model_len) is ${widest} tokens on every endpoint serving it`);
    }
    const guided = guidedFields(gen.extra);
    if (guided.length) {
      const versions = await Promise.all(members.map(async (m) => ({ id: m.id, version: await this.version(m.slot, meter) })));
      const warning = guidedWarning(guided, versions);
      if (warning) warnings.push(warning);
    }
    return { model, members, warnings };
  }

  /** The server versions these endpoints report (`GET /version`, asked once per endpoint), distinct and sorted. */
  async serverVersions(): Promise<string[]> {
    const versions = await Promise.all(this.endpoints.map((e) => this.version(e.slot)));
    return [...new Set(versions.filter((v): v is string => v !== null))].sort();
  }

  /** `GET /version` once per endpoint; null when it does not say (older or non-vLLM servers). */
  version(slot: number, meter?: Meter): Promise<string | null> {
    let pending = this.versions.get(slot);
    if (!pending) {
      pending = this.lookupLimit(() => this.clients[slot]!.json<{ version?: unknown }>('GET', '/version', undefined, this.options.lookupTimeoutMs, undefined, { meter })).then(
        ({ body }) => (typeof body.version === 'string' ? body.version : null),
        () => null,
      );
      this.versions.set(slot, pending);
    }
    return pending;
  }

  /**
   * One request's worth of prompts to one endpoint, the pool's batching in one place: `chat` sends
   * one prompt to `/v1/chat/completions`; `batch` sends the list to `/v1/completions`, split to the
   * endpoint's prompt-list cap (ours, or a lower one learned from its 400), and a list the server
   * rejects as a client error is bisected so only the offending prompts fail, each with the server's
   * own message. Answers reach `sink` as they become final (streamed: at each finish_reason).
   * Throws a RequestFailure for what is not the prompts' fault; prompts not answered by then are
   * the caller's to send elsewhere.
   */
  async send(member: Member, model: string, prompts: readonly string[], shape: Shape, gen: GenerationOptions, call: SendCall, sink: SendSink): Promise<void> {
    if (shape === 'chat') return this.exchange(member, model, prompts, 0, shape, RAW, gen, call, sink);
    if (shape === 'embed') return this.embed(member, model, prompts, call, sink);
    const setting = gen.template ?? 'none';
    if (setting === 'none') return this.sendList(member, model, prompts, RAW, gen, call, sink);
    if (typeof setting === 'object') {
      let renderer = this.fileRenderers.get(setting);
      if (!renderer) this.fileRenderers.set(setting, (renderer = new FileRenderer(setting)));
      const kwargs = templateKwargs(gen.extra);
      const texts = prompts.map((p) => renderer.render(chatMessages(p, gen.system), kwargs));
      return this.sendList(member, model, texts, { template: 'file', harmony: speaksHarmony(texts[0] ?? '') }, gen, call, sink);
    }
    const request: PlanRequest = {
      model,
      system: gen.system,
      kwargs: templateKwargs(gen.extra),
      chatBatchFits: !call.stream && (gen.n ?? 1) === 1 && gen.extra?.['tools'] === undefined,
    };
    if (request.chatBatchFits && (await this.renderer.servesChatBatch(member.slot, model, call))) {
      try {
        return await this.sendList(member, model, prompts, CHAT_BATCH, gen, call, sink);
      } catch (err) {
        if (!RequestFailure.from(err).routeMissing) throw err;
        // An older server than its model's others (a mixed swarm): nothing was answered; its batches take the next path from now on.
        this.renderer.lacksChatBatch(member.slot);
      }
    }
    const plan = await this.renderer.prepared(member.slot, request, call);
    return this.sendPlanned(member, model, prompts, plan, request, setting === 'server', gen, call, sink);
  }

  /** A batch's list, split at the endpoint's prompt-list cap (ours, or a lower one learned from its 400). */
  private sendList(member: Member, model: string, prompts: readonly WirePrompt[], rendering: Rendering, gen: GenerationOptions, call: SendCall, sink: SendSink): Promise<void> {
    const cap = Math.min(this.learnedCaps.get(member.slot) ?? Infinity, this.options.maxPromptsPerRequest);
    if (prompts.length <= cap) return this.exchange(member, model, prompts, 0, 'batch', rendering, gen, call, sink);
    const parts: Array<Promise<void>> = [];
    for (let at = 0; at < prompts.length; at += cap) parts.push(this.exchange(member, model, prompts.slice(at, at + cap), at, 'batch', rendering, gen, call, sink));
    return allOrFirstFailure(parts);
  }

  /**
   * A templated batch on `/v1/completions`, as its plan says: placed in the template's skeleton (text,
   * no BOS added); rendered prompt by prompt through `/tokenize` (a prompt it rejects fails alone,
   * the rest go on under a sink that maps their positions back); or raw where the server cannot render.
   */
  private async sendPlanned(member: Member, model: string, prompts: readonly string[], plan: PreparedPlan, request: PlanRequest, insist: boolean, gen: GenerationOptions, call: SendCall, sink: SendSink): Promise<void> {
    if (plan.kind === 'skeleton') {
      const texts = prompts.map((p) => fill(plan.skeleton, p));
      return this.sendList(member, model, texts, { template: 'skeleton', harmony: plan.skeleton.harmony }, gen, call, sink);
    }
    if (plan.kind === 'raw') {
      if (insist) throw new RequestFailure('protocol', `${member.id} does not render chat templates through /tokenize: ${plan.why}`);
      call.note(`batches skip the chat template on ${member.id}: /tokenize does not render messages there (${plan.why}); give --template file:PATH to render client-side`);
      return this.sendList(member, model, prompts, RAW, gen, call, sink);
    }
    call.note(`batches for ${model}: ${plan.why}, so each prompt is rendered by its own POST /tokenize (one request per distinct prompt)`);
    const rendered = await this.renderer.renderEach(member.slot, request, prompts, call.signal, call);
    const kept: number[] = [];
    const ids: number[][] = [];
    rendered.forEach((r, i) => (r instanceof RequestFailure ? sink.onPromptError(i, r) : (kept.push(i), ids.push(r))));
    if (!ids.length) return;
    return this.sendList(member, model, ids, { template: 'tokenize', harmony: plan.harmony }, gen, call, kept.length === prompts.length ? sink : picked(sink, kept));
  }

  /** Groups a batch run's prompts as Aurora-Swarm's send_all_batched: prompt i to member i mod n, each group cut at the prompt-list cap. */
  groupBatches<T>(items: readonly T[], members: readonly Member[]): Array<{ member: Member; items: T[] }> {
    const groups = members.map(() => [] as T[]);
    for (let i = 0; i < items.length; i++) groups[i % members.length]!.push(items[i]!);
    return groups.flatMap((group, m) => chunk(group, this.options.maxPromptsPerRequest).map((part) => ({ member: members[m]!, items: part })));
  }

  private async exchange(member: Member, model: string, prompts: readonly WirePrompt[], offset: number, shape: Shape, rendering: Rendering, gen: GenerationOptions, call: SendCall, sink: SendSink): Promise<void> {
    try {
      await this.request(member, model, prompts, offset, shape, rendering, gen, call, sink);
    } catch (err) {
      const failure = RequestFailure.from(err);
      if (failure.kind !== 'http' || shape === 'chat') throw failure;
      // A proxy's body cap (413): the list is too big in bytes, not wrong; it goes again in halves, and the endpoint's lists stay that size.
      if (failure.status === 413 && prompts.length > 1) {
        this.learnedCaps.set(member.slot, Math.ceil(prompts.length / 2));
        return this.sendList(member, model, prompts, rendering, gen, call, shifted(sink, offset));
      }
      if (failure.status !== 400) throw failure;
      const serverCap = /maximum allowed count of (\d+)/.exec(failure.message);
      if (serverCap && Number(serverCap[1]) >= 1 && Number(serverCap[1]) < prompts.length) {
        this.learnedCaps.set(member.slot, Number(serverCap[1]));
        return this.sendList(member, model, prompts, rendering, gen, call, shifted(sink, offset));
      }
      // A field of the request itself is wrong: every prompt would fail alike, so do not bisect.
      if (failure.param !== null && !PROMPT_PARAMS.has(failure.param)) throw failure;
      return this.bisect(member, model, prompts, offset, failure, rendering, gen, call, sink);
    }
  }

  /**
   * Batch surgery: halves of a rejected list are sent apart until each rejected prompt stands alone
   * with the server's message for it — O(k log n) requests for k bad prompts. Only an error that
   * speaks of no prompt (no prompt `param`, no context length) and rejects both halves with the very
   * words of their parent is taken as the request's own fault, failing the whole list: two over-long
   * prompts of the same length get the same words, and each must still fail alone.
   */
  private async bisect(member: Member, model: string, prompts: readonly WirePrompt[], offset: number, failure: RequestFailure, rendering: Rendering, gen: GenerationOptions, call: SendCall, sink: SendSink): Promise<void> {
    if (prompts.length === 1) return sink.onPromptError(offset, failure);
    const half = Math.ceil(prompts.length / 2);
    const parts: Array<[number, number]> = [[0, half], [half, prompts.length]];
    const tries = await Promise.allSettled(parts.map(([a, b]) => this.request(member, model, prompts.slice(a, b), offset + a, 'batch', rendering, gen, call, sink)));
    const failures = tries.map((t) => (t.status === 'rejected' ? RequestFailure.from(t.reason) : null));
    const other = failures.find((f) => f && !(f.kind === 'http' && f.status === 400));
    if (other) throw other;
    if (!aboutAPrompt(failure) && failures.every((f) => f?.message === failure.message)) {
      for (let i = 0; i < prompts.length; i++) sink.onPromptError(offset + i, failure);
      return;
    }
    await allOrFirstFailure(parts.map(([a, b], k) => (failures[k] ? this.bisect(member, model, prompts.slice(a, b), offset + a, failures[k]!, rendering, gen, call, sink) : Promise.resolve())));
  }

  /** One HTTP request: JSON, or an event stream whose answers are released as each finishes. */
  private async request(member: Member, model: string, prompts: readonly WirePrompt[], offset: number, shape: Shape, rendering: Rendering, gen: GenerationOptions, call: SendCall, sink: SendSink): Promise<void> {
    const n = gen.n ?? 1;
    const stream = Boolean(call.stream);
    // Sizing counts characters (4 per token); a rendered prompt's exact token count is put in those units.
    const longest = prompts.reduce((m, p) => Math.max(m, typeof p === 'string' ? p.length : 4 * p.length), 0);
    const maxTokens = this.maxTokens(member, gen, longest);
    const chatBatch = rendering.template === 'chat-batch';
    const body =
      shape === 'chat'
        ? chatBody(prompts[0] as string, gen, model, maxTokens, stream)
        : chatBatch
          ? chatBatchBody(prompts as readonly string[], gen, model, maxTokens)
          : completionsBody(prompts, gen, model, maxTokens, stream, rendering);
    const finish = (answer: Answer): Answer => (shape === 'batch' ? renderedAnswer(answer, rendering) : answer);
    const path = shape === 'chat' ? '/v1/chat/completions' : batchPath(rendering);
    const client = this.clients[member.slot]!;
    const meter = carrying(call, sink, offset, prompts.length);
    if (!stream) {
      const timeout = shape === 'chat' ? this.options.timeoutMs : this.batchTimeoutMs(prompts.length * n);
      // vLLM sends an unstreamed answer's headers once it is generated: from then on the endpoint has answered.
      const onHeaders = call.onActivity && ((at: number) => call.onActivity!(at));
      const ex = await client.json('POST', path, body, timeout, call.signal, { onHeaders, meter, maxBytes: responseCap(prompts, n, maxTokens) });
      const answers = shape === 'chat' ? [readChat(ex.body, n)] : chatBatch ? readChatBatch(ex.body, prompts.length) : readCompletions(ex.body, prompts.length, n);
      const usage = readUsage(ex.body);
      if (usage) sink.onUsage(usage, prompts.length === 1);
      const times = { sentAt: ex.sentAt, firstByteAt: ex.firstByteAt };
      let lost = 0;
      for (let i = 0; i < answers.length; i++) {
        const answer = answers[i];
        if (answer) sink.onAnswer(offset + i, finish(answer), times);
        else lost++;
      }
      // Choices without text: those prompts alone go to another endpoint (the others are answered).
      if (lost) throw new RequestFailure('http', `${lost} of ${answers.length} choices came without text`);
      return;
    }
    let times: StreamTimes = { sentAt: performance.now(), firstByteAt: performance.now() };
    const answers = new StreamAnswers(prompts.length, n, { onAnswer: (i, a) => sink.onAnswer(offset + i, finish(a), times), onGap: (ms) => sink.onGap(ms) });
    const { done } = await client.stream(path, body, this.options.timeoutMs, call.signal, (event, at) => {
      call.onActivity?.(at);
      answers.add(event, at);
    }, (t) => {
      times = t;
      call.onActivity?.(t.firstByteAt);
    }, meter);
    // No [DONE] (a proxy cut the tail, a server that never sends it): fine when every choice finished; else the rest was lost.
    if (!done && !answers.allFinished) throw new RequestFailure('reset', `the event stream of ${path} ended before [DONE]`);
    answers.end();
    if (answers.usage) sink.onUsage(answers.usage, prompts.length === 1);
  }

  /** `POST /v1/embeddings` with the list (grouped and capped as batches are); each vector reaches `sink` as an answer. */
  private async embed(member: Member, model: string, inputs: readonly string[], call: SendCall, sink: SendSink): Promise<void> {
    const ex = await this.clients[member.slot]!.json('POST', '/v1/embeddings', embeddingsBody(inputs, model), this.batchTimeoutMs(inputs.length), call.signal, { meter: carrying(call, sink, 0, inputs.length) });
    const times = { sentAt: ex.sentAt, firstByteAt: ex.firstByteAt };
    const usage = readUsage(ex.body);
    if (usage) sink.onUsage(usage, inputs.length === 1);
    readEmbeddings(ex.body, inputs.length).forEach((embedding, i) => sink.onAnswer(i, { text: null, reasoning: null, finishReason: null, embedding }, times));
  }

  /** Aurora-Swarm's wave-scaled batch timeout: max(timeout, ceil(n / maxNumSeqs) · per-sequence), optionally capped. */
  batchTimeoutMs(sequences: number): number {
    const o = this.options;
    const waves = Math.max(1, Math.ceil(sequences / o.maxNumSeqs));
    const effective = Math.max(o.timeoutMs, waves * o.timeoutPerSequenceMs);
    return o.batchTimeoutCapMs ? Math.min(effective, o.batchTimeoutCapMs) : effective;
  }

  private maxTokens(member: Member, gen: GenerationOptions, promptChars: number): number {
    if (gen.maxTokens !== undefined) return gen.maxTokens;
    const chars = promptChars + (gen.system?.length ?? 0);
    return sizeMaxTokens(chars, member.maxModelLen, gen.defaultMaxTokens ?? 512, gen.contextBuffer ?? 512);
  }

  private setStatus(state: EndpointState, status: EndpointHealth, reason: string | null): void {
    if (state.status === status && state.reason === reason) return;
    state.status = status;
    state.reason = reason;
    this.events.emit('status', state);
  }

  async close(): Promise<void> {
    if (this.view) return; // a sub-pool borrows its parent's connections; the parent closes them
    await Promise.all(this.clients.map((c) => c.close()));
  }
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}

/**
 * The most bytes an unstreamed answer to these prompts can honestly take: every choice's
 * `max_tokens` at a generous 64 bytes a token (text escaped as JSON, its id, logprobs aside), each
 * prompt's ids back (`prompt_token_ids`, ~8 bytes per character at worst), and a MiB to spare.
 */
function responseCap(prompts: readonly WirePrompt[], n: number, maxTokens: number): number {
  let promptBytes = 0;
  for (const p of prompts) promptBytes += 8 * p.length;
  return 2 ** 20 + n * prompts.length * (maxTokens * 64 + 1024) + n * promptBytes;
}

/** `work`, or a cancellation as soon as `signal` aborts (one listener, removed when `work` settles). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new RequestFailure('cancelled', 'cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new RequestFailure('cancelled', 'cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then(
      (value) => (signal.removeEventListener('abort', onAbort), resolve(value)),
      (err: unknown) => (signal.removeEventListener('abort', onAbort), reject(err)),
    );
  });
}

/** A sink for a part of a list that starts at `offset`. */
function shifted(sink: SendSink, offset: number): SendSink {
  return {
    onAnswer: (i, answer, times) => sink.onAnswer(offset + i, answer, times),
    onPromptError: (i, failure) => sink.onPromptError(offset + i, failure),
    onUsage: (usage, own) => sink.onUsage(usage, own),
    onGap: (ms) => sink.onGap(ms),
    onCarried: (i) => sink.onCarried(offset + i),
  };
}

/** A sink for a list made of some of another list's prompts: `kept[i]` is where prompt i came from. */
function picked(sink: SendSink, kept: readonly number[]): SendSink {
  return {
    onAnswer: (i, answer, times) => sink.onAnswer(kept[i]!, answer, times),
    onPromptError: (i, failure) => sink.onPromptError(kept[i]!, failure),
    onUsage: (usage, own) => sink.onUsage(usage, own),
    onGap: (ms) => sink.onGap(ms),
    onCarried: (i) => sink.onCarried(kept[i]!),
  };
}

/** The run's meter for a generation request carrying `count` prompts from `offset`: each is told it was carried. */
function carrying(call: SendCall, sink: SendSink, offset: number, count: number): Meter {
  return {
    sent(endpoint, path) {
      call.sent(endpoint, path);
      for (let i = 0; i < count; i++) sink.onCarried(offset + i);
    },
  };
}

/** Waits for every part; the first failure (after all settle, so none answers behind our back) is thrown. */
async function allOrFirstFailure(parts: ReadonlyArray<Promise<void>>): Promise<void> {
  const settled = await Promise.allSettled(parts);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** A 400 the server says is about a prompt: it names a prompt's `param`, or (servers that name none) the context length. */
function aboutAPrompt(failure: RequestFailure): boolean {
  return failure.param !== null ? PROMPT_PARAMS.has(failure.param) : /maximum context length|input tokens|prompt/i.test(failure.message);
}

function maxModelLenOf(state: EndpointState, model: string): number | null {
  return state.models?.find((m) => m.id === model)?.maxModelLen ?? null;
}

/** The first few of a swarm's endpoints in a message, then how many more: 10,000 down ones made a 666,000-character line. */
function listed<T>(items: readonly T[], show: (item: T) => string, max = 5): string {
  const shown = items.slice(0, max).map(show).join('; ');
  return items.length > max ? `${shown}; … and ${(items.length - max).toLocaleString('en-US')} more` : shown;
}

function describeDown(s: EndpointState): string {
  return `${s.id} (${s.reason ?? 'down'})`;
}

function describeServed(states: EndpointState[]): string {
  const counts = new Map<string, number>();
  for (const s of states) for (const m of s.models ?? []) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
  return [...counts].map(([id, n]) => `${id} (${n} endpoint${n === 1 ? '' : 's'})`).join(', ') || '(nothing listed)';
}

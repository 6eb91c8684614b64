import { EventEmitter } from 'node:events';
import pLimit, { type LimitFunction } from 'p-limit';
import { endpointId, matchesTags, originOf, type Endpoint } from './endpoint.ts';
import { EndpointClient, type Exchange } from './http/endpoint-client.ts';
import { RequestFailure } from './http/failure.ts';
import { FALLBACK_MAX_MODEL_LEN, parseModelList, sizeMaxTokens, type ServedModel } from './models.ts';
import { checkExtra, DEFAULT_POOL_OPTIONS, type GenerationOptions, type PoolOptions } from './options.ts';
import { chatBody, completionsBody, readChat, readCompletions, readUsage, type Answer, type Usage } from './request-shapes.ts';
import { attemptsOf, withRetries } from './retry.ts';

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

/** What a run lends every call: its cancel signal and its request tally. */
export interface CallContext {
  signal: AbortSignal;
  onRequest(member: Member): void;
}

export interface Sent<T> {
  value: T;
  attempts: number;
  sentAt: number;
  firstByteAt: number;
  usage: Usage | null;
}

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
  private readonly lookups = new Map<number, Promise<void>>();
  private readonly learnedCaps = new Map<number, number>();
  private readonly events = new EventEmitter();

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
    }));
    this.clients = this.states.map((s) => {
      const route = this.options.routes?.get(s.id) ?? { kind: 'direct' as const, origin: originOf(s.endpoint) };
      return new EndpointClient(
        route,
        { connections: this.options.connectionsPerEndpoint, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 10_000 },
        headers,
      );
    });
  }

  get endpoints(): readonly Readonly<EndpointState>[] {
    return this.states;
  }

  /** Called with the endpoint's state whenever it turns up or down. Returns an unsubscribe. */
  onStatus(listener: (state: Readonly<EndpointState>) => void): () => void {
    this.events.on('status', listener);
    return () => this.events.off('status', listener);
  }

  /** Records that an endpoint (or the tunnel to it) failed; its later prompts go elsewhere. */
  markDown(slot: number, failure: RequestFailure): void {
    this.setStatus(this.states[slot]!, failure.kind === 'tunnel' ? 'tunnel-down' : 'down', failure.message);
  }

  /** Forgets what is known of these endpoints (after a tunnel reconnects), so the next run looks again. */
  forget(slots: readonly number[] = this.states.map((s) => s.slot)): void {
    for (const slot of slots) {
      this.lookups.delete(slot);
      this.learnedCaps.delete(slot);
      const state = this.states[slot]!;
      state.models = null;
      this.setStatus(state, 'unknown', null);
    }
  }

  client(slot: number): EndpointClient {
    return this.clients[slot]!;
  }

  /** `GET /v1/models` once per endpoint for the pool's lifetime (never once per prompt). */
  lookupModels(slot: number, signal?: AbortSignal): Promise<void> {
    let pending = this.lookups.get(slot);
    if (!pending) {
      pending = this.fetchModels(this.states[slot]!, signal ?? new AbortController().signal);
      this.lookups.set(slot, pending);
    }
    return pending;
  }

  private async fetchModels(state: EndpointState, signal: AbortSignal): Promise<void> {
    const policy = { ...this.options.retry, maxAttempts: 2 };
    try {
      const { value } = await withRetries(policy, signal, () =>
        this.clients[state.slot]!.json('GET', '/v1/models', undefined, this.options.lookupTimeoutMs, signal),
      );
      state.models = parseModelList(value.body);
      this.setStatus(state, 'up', null);
    } catch (err) {
      const failure = err instanceof RequestFailure ? err : new RequestFailure('protocol', (err as Error).message);
      if (failure.kind === 'cancelled') {
        this.lookups.delete(state.slot);
        throw failure;
      }
      // A server without a usable /v1/models (older or non-vLLM) can still generate; one that
      // refuses, resets, times out or rejects our key cannot.
      const usable = failure.kind === 'protocol' || (failure.kind === 'http' && failure.status === 404);
      if (usable) this.setStatus(state, 'up', null);
      else this.markDown(state.slot, failure);
    }
  }

  /** Endpoints for a run: tag filter, reachable, serving the chosen model. Warns about those left out. */
  async select(gen: GenerationOptions, tags: ReadonlyArray<[string, string]>, signal: AbortSignal, exclude: readonly string[] = []): Promise<Selection> {
    checkExtra(gen.extra);
    const left = new Set(exclude);
    const tagged = this.states.filter((s) => matchesTags(s.endpoint, tags) && !left.has(s.id));
    if (!tagged.length && left.size) throw new SelectionError(`every endpoint${tags.length ? ' with those tags' : ''} is excluded from runs`);
    if (!tagged.length) {
      const present = [...new Set(this.states.flatMap((s) => Object.entries(s.endpoint.tags).map(([k, v]) => `${k}=${v}`)))];
      const wanted = tags.map(([k, v]) => `${k}=${v}`).join(', ');
      throw new SelectionError(`no endpoint has tag ${wanted}; tags in the hostfile: ${present.join(', ') || '(none)'}`);
    }
    await Promise.all(tagged.map((s) => this.lookupModels(s.slot, signal)));
    const warnings: string[] = [];
    const up = tagged.filter((s) => s.status === 'up');
    const down = tagged.filter((s) => s.status !== 'up');
    if (!up.length) throw new SelectionError(`no endpoint is usable: ${down.map(describeDown).join('; ')}`);
    if (down.length) warnings.push(`left out ${down.length} endpoint(s) that cannot be used: ${down.map(describeDown).join('; ')}`);

    const model = gen.model || up.find((s) => s.models?.length)?.models![0]!.id;
    if (!model) throw new SelectionError('no endpoint lists a model in /v1/models; name one with --model');
    const serving = up.filter((s) => s.models === null || s.models.some((m) => m.id === model));
    const others = up.filter((s) => !serving.includes(s));
    if (!serving.length) {
      throw new SelectionError(`no endpoint serves model "${model}"; served: ${describeServed(up)}`);
    }
    if (others.length) {
      warnings.push(`left out ${others.length} endpoint(s) that do not serve "${model}": ${others.map((s) => `${s.id} (${s.models!.map((m) => m.id).join(', ')})`).join('; ')}`);
    }
    const unsized = serving.filter((s) => maxModelLenOf(s, model) === null);
    if (unsized.length && gen.maxTokens === undefined) {
      warnings.push(
        `max_model_len unknown for ${unsized.map((s) => s.id).join(', ')}: sizing max_tokens for ${FALLBACK_MAX_MODEL_LEN} tokens of context (set --max-tokens to choose)`,
      );
    }
    const members = serving.map((s) => ({ slot: s.slot, id: s.id, maxModelLen: maxModelLenOf(s, model) ?? FALLBACK_MAX_MODEL_LEN }));
    return { model, members, warnings };
  }

  /** One prompt, `POST /v1/chat/completions`, retried on transient failures. */
  chat(member: Member, model: string, prompt: string, gen: GenerationOptions, ctx: CallContext): Promise<Sent<Answer>> {
    const body = chatBody(prompt, gen, model, this.maxTokens(member, gen, prompt.length));
    return this.post(member, '/v1/chat/completions', body, this.options.timeoutMs, ctx, readChat);
  }

  /**
   * A list of prompts in one `POST /v1/completions`, with a timeout scaled by the waves it needs.
   * A server whose prompt-list cap is below ours says so in its 400; the list is then split to fit
   * and the cap remembered for that endpoint.
   */
  async complete(member: Member, model: string, prompts: string[], gen: GenerationOptions, ctx: CallContext): Promise<Sent<Array<Answer | Error>>> {
    const cap = this.learnedCaps.get(member.slot);
    if (cap !== undefined && prompts.length > cap) {
      const parts = await Promise.all(chunk(prompts, cap).map((part) => this.complete(member, model, part, gen, ctx)));
      return mergeSent(parts);
    }
    const longest = prompts.reduce((m, p) => Math.max(m, p.length), 0);
    const body = completionsBody(prompts, gen, model, this.maxTokens(member, gen, longest));
    const n = gen.n ?? 1;
    try {
      return await this.post(member, '/v1/completions', body, this.batchTimeoutMs(prompts.length * n), ctx, (b) => readCompletions(b, prompts.length, n));
    } catch (err) {
      const serverCap = err instanceof RequestFailure && err.status === 400 ? /maximum allowed count of (\d+)/.exec(err.message) : null;
      if (!serverCap || Number(serverCap[1]) < 1 || Number(serverCap[1]) >= prompts.length) throw err;
      this.learnedCaps.set(member.slot, Number(serverCap[1]));
      const retried = await this.complete(member, model, prompts, gen, ctx);
      return { ...retried, attempts: retried.attempts + attemptsOf(err) };
    }
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

  private async post<T>(
    member: Member,
    path: string,
    body: unknown,
    timeoutMs: number,
    ctx: CallContext,
    read: (body: unknown) => T,
  ): Promise<Sent<T>> {
    let last: Exchange<unknown> | undefined;
    const { value, attempts } = await withRetries(this.options.retry, ctx.signal, async () => {
      ctx.onRequest(member);
      last = await this.clients[member.slot]!.json('POST', path, body, timeoutMs, ctx.signal);
      try {
        return read(last.body);
      } catch (err) {
        throw new RequestFailure('protocol', (err as Error).message);
      }
    });
    return { value, attempts, sentAt: last!.sentAt, firstByteAt: last!.firstByteAt, usage: readUsage(last!.body) };
  }

  private setStatus(state: EndpointState, status: EndpointHealth, reason: string | null): void {
    if (state.status === status && state.reason === reason) return;
    state.status = status;
    state.reason = reason;
    this.events.emit('status', state);
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.close()));
  }
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}

/** One Sent for several requests made in place of one: answers in order, attempts and usage summed. */
function mergeSent<T>(parts: Array<Sent<T[]>>): Sent<T[]> {
  const usage = parts.every((p) => p.usage)
    ? { promptTokens: parts.reduce((s, p) => s + p.usage!.promptTokens, 0), completionTokens: parts.reduce((s, p) => s + p.usage!.completionTokens, 0) }
    : null;
  return {
    value: parts.flatMap((p) => p.value),
    attempts: parts.reduce((s, p) => s + p.attempts, 0),
    sentAt: Math.min(...parts.map((p) => p.sentAt)),
    firstByteAt: Math.max(...parts.map((p) => p.firstByteAt)),
    usage,
  };
}

function maxModelLenOf(state: EndpointState, model: string): number | null {
  return state.models?.find((m) => m.id === model)?.maxModelLen ?? null;
}

function describeDown(s: EndpointState): string {
  return `${s.id} (${s.reason ?? 'down'})`;
}

function describeServed(states: EndpointState[]): string {
  const counts = new Map<string, number>();
  for (const s of states) for (const m of s.models ?? []) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
  return [...counts].map(([id, n]) => `${id} (${n} endpoint${n === 1 ? '' : 's'})`).join(', ') || '(nothing listed)';
}

import pLimit, { type LimitFunction } from 'p-limit';
import type { EndpointClient } from '../http/endpoint-client.ts';
import { RequestFailure } from '../http/failure.ts';
import type { RequestSignal } from '../http/abort.ts';
import { probeOf, type Meter } from '../http/request-meter.ts';
import { CHAT_BATCH_PATH } from '../requests/request-shapes.ts';
import { speaksHarmony } from './harmony.ts';
import { chatMessages, type TemplateKwargs } from './messages.ts';
import { fill, SENTINELS, skeletonOf, type Rendered, type Skeleton } from './skeleton.ts';

/**
 * How a templated batch reaches an endpoint's chat template, cheapest exact path first (the pool
 * uses the batch chat endpoint where `servesChatBatch`, then asks `prepared`):
 * `chat-batch` — vLLM ≥ 0.19's `POST /v1/chat/completions/batch` (no preparation at all);
 * `skeleton` — text around the prompt, rendered once per model, system prompt and kwargs;
 * `tokenize` — each prompt rendered by `/tokenize` (a template that rewrites content);
 * `raw` — the server cannot render (`why`).
 */
export type BatchPlan = { kind: 'chat-batch' } | PreparedPlan;
export type PreparedPlan = { kind: 'skeleton'; skeleton: Skeleton } | { kind: 'tokenize'; harmony: boolean; why: string } | { kind: 'raw'; why: string };

/** What of a run decides the plan. */
export interface PlanRequest {
  model: string;
  system: string | undefined;
  kwargs: TemplateKwargs;
  /** The batch chat endpoint serves unstreamed, n = 1 requests without tools. */
  chatBatchFits: boolean;
}

/** `/tokenize` requests in flight per endpoint when prompts are rendered one by one (1,000 endpoints × 32 ran out of file descriptors)… */
const TOKENIZE_CONCURRENCY = 4;
/** …and over all endpoints. */
const TOKENIZE_TOTAL = 256;
/** Prompts rendered one by one, kept for reuse. */
const CACHE_ENTRIES = 50_000;

/** What rendering the sentinels came to for one model, system prompt and kwargs. */
type Preparation = { skeleton: Skeleton } | { skeleton: null; harmony: boolean; why: string };

/**
 * Chooses and prepares each endpoint's path to the chat template, for the pool's life: whether the
 * endpoint serves the batch chat endpoint (learned from its first answer there), and one skeleton
 * per model, system prompt and kwargs, shared by every endpoint serving that model. Every request
 * goes out under the caller's meter, so the run that needed it counts it.
 */
export class ServerRenderer {
  private readonly noChatBatch = new Set<number>();
  private readonly chatBatchProbes = new Map<string, Promise<boolean>>();
  private readonly preparations = new Map<string, Promise<Preparation>>();
  /** Endpoints whose `/tokenize` refused to render a conversation, and why. */
  private readonly refusals = new Map<number, string>();
  private readonly rendered = new Map<string, Promise<Uint32Array>>();
  private readonly limits = new Map<number, LimitFunction>();
  private readonly total = pLimit(TOKENIZE_TOTAL);

  constructor(
    private readonly client: (slot: number) => EndpointClient,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Whether this endpoint serves the batch chat endpoint. Asked once per model, on the first endpoint
   * that needs to know, with a body no server generates from (`messages` not a list: a 4xx means the
   * route is there, 404 or 405 that it is not) while that model's other batches wait for the answer —
   * at 1,000 endpoints, one request instead of a thousand lists sent only to be refused. An endpoint
   * that later answers 404 there anyway (an older server in a mixed swarm) is planned otherwise alone.
   */
  async servesChatBatch(slot: number, model: string, meter: Meter | undefined): Promise<boolean> {
    if (this.noChatBatch.has(slot)) return false;
    let probe = this.chatBatchProbes.get(model);
    if (!probe) {
      probe = this.probeChatBatch(slot, model, meter);
      this.chatBatchProbes.set(model, probe);
      probe.catch(() => this.chatBatchProbes.get(model) === probe && this.chatBatchProbes.delete(model));
    }
    return probe;
  }

  private async probeChatBatch(slot: number, model: string, meter: Meter | undefined): Promise<boolean> {
    try {
      await this.client(slot).json('POST', CHAT_BATCH_PATH, { model, messages: 'is this route served?' }, this.timeoutMs, undefined, { meter, countAs: probeOf(CHAT_BATCH_PATH) });
      return true;
    } catch (err) {
      const failure = RequestFailure.from(err);
      // The probe names a served model, so any 404 is the route's (an OpenAI-style service types its 404s too).
      if (failure.routeMissing || (failure.kind === 'http' && failure.status === 404)) return false;
      if (failure.kind === 'http' && failure.status! < 500 && failure.status !== 408 && failure.status !== 429) return true;
      throw failure; // the endpoint failed: its batch fails over, and the next one asks again
    }
  }

  /** The cheapest exact path on `/v1/completions` for this endpoint. Throws a RequestFailure when the endpoint failed while preparing it. */
  async prepared(slot: number, request: PlanRequest, meter: Meter | undefined): Promise<PreparedPlan> {
    const prepared = await this.prepare(slot, request, meter);
    if (prepared === null) return { kind: 'raw', why: this.refusals.get(slot)! };
    if (prepared.skeleton) return { kind: 'skeleton', skeleton: prepared.skeleton };
    return { kind: 'tokenize', harmony: prepared.harmony, why: prepared.why };
  }

  /** The endpoint answered the batch chat endpoint 404 or 405: an older server, planned otherwise from now on. */
  lacksChatBatch(slot: number): void {
    this.noChatBatch.add(slot);
  }

  /** Forgets what an endpoint was found to serve (after it came back, perhaps another server). */
  forget(slot: number): void {
    this.noChatBatch.delete(slot);
    this.refusals.delete(slot);
  }

  /** The skeleton for this model, system prompt and kwargs, rendered on this endpoint unless another already did; null when this endpoint cannot render. */
  private async prepare(slot: number, request: PlanRequest, meter: Meter | undefined): Promise<Preparation | null> {
    const key = JSON.stringify([request.model, request.system ?? '', request.kwargs ?? null]);
    let pending = this.preparations.get(key);
    const mine = !pending;
    if (!pending) {
      if (this.refusals.has(slot)) return null;
      pending = this.sentinels(slot, request, meter);
      this.preparations.set(key, pending);
      // Any failure is forgotten: the next batch (perhaps on another endpoint) prepares again.
      pending.catch(() => this.preparations.get(key) === pending && this.preparations.delete(key));
    }
    try {
      return await pending;
    } catch (err) {
      const failure = RequestFailure.from(err);
      // Only the server's own refusal (a 4xx, a body without tokens) says it cannot render; anything else is the endpoint's failure.
      const refused = failure.kind === 'protocol' || (failure.kind === 'http' && failure.status !== undefined && failure.status < 500 && failure.status !== 408 && failure.status !== 429);
      if (!refused) throw failure;
      // Another endpoint could not render (a service serving only the API, in a mixed swarm): this one tries itself.
      if (!mine) return this.prepare(slot, request, meter);
      this.refusals.set(slot, failure.message);
      return null;
    }
  }

  /** The two sentinels rendered, and for a lossy reading of their pieces, the text checked against the server's own tokens. */
  private async sentinels(slot: number, request: PlanRequest, meter: Meter | undefined): Promise<Preparation> {
    const [a, b] = await Promise.all(SENTINELS.map((s) => this.tokenize(slot, request, { messages: chatMessages(s, request.system), add_generation_prompt: true, return_token_strs: true }, meter)));
    const outcome = skeletonOf(a!, b!);
    const harmony = speaksHarmony(a!.strs.join(''));
    if (!outcome.skeleton) return { skeleton: null, harmony, why: outcome.reason };
    if (outcome.check) {
      const again = await this.tokenize(slot, request, { prompt: fill(outcome.skeleton, SENTINELS[1]), add_special_tokens: false }, meter);
      if (again.tokens.join() !== b!.tokens.join()) return { skeleton: null, harmony, why: "the rendered text, read back from the server's token pieces, does not tokenize as the template's" };
    }
    return { skeleton: outcome.skeleton };
  }

  /**
   * Each prompt's token ids, rendered one by one (a template that rewrites content), or the failure
   * `/tokenize` answered for it with a 400 (that prompt's own fault). Any other failure rejects.
   */
  async renderEach(slot: number, request: PlanRequest, prompts: readonly string[], signal: RequestSignal, meter: Meter | undefined): Promise<Array<number[] | RequestFailure>> {
    const settled = await Promise.allSettled(prompts.map((p) => this.renderOne(slot, request, p, signal, meter)));
    return settled.map((s) => {
      if (s.status === 'fulfilled') return Array.from(s.value);
      const failure = RequestFailure.from(s.reason);
      if (failure.kind === 'http' && failure.status === 400) return failure;
      throw failure;
    });
  }

  private renderOne(slot: number, request: PlanRequest, prompt: string, signal: RequestSignal, meter: Meter | undefined): Promise<Uint32Array> {
    const key = JSON.stringify([request.model, request.system ?? '', prompt, request.kwargs ?? null]);
    const hit = this.rendered.get(key);
    if (hit) {
      this.rendered.delete(key); // refreshed: the oldest entry goes first
      this.rendered.set(key, hit);
      return hit;
    }
    const pending = this.limit(slot)(() =>
      this.total(() => {
        if (signal.aborted) throw new RequestFailure('cancelled', 'cancelled');
        return this.tokenize(slot, request, { messages: chatMessages(prompt, request.system), add_generation_prompt: true }, meter);
      }),
    ).then(({ tokens }) => Uint32Array.from(tokens));
    pending.catch(() => this.rendered.get(key) === pending && this.rendered.delete(key));
    this.rendered.set(key, pending);
    if (this.rendered.size > CACHE_ENTRIES) this.rendered.delete(this.rendered.keys().next().value!);
    return pending;
  }

  private limit(slot: number): LimitFunction {
    let limit = this.limits.get(slot);
    if (!limit) this.limits.set(slot, (limit = pLimit(TOKENIZE_CONCURRENCY)));
    return limit;
  }

  private async tokenize(slot: number, request: PlanRequest, fields: Record<string, unknown>, meter: Meter | undefined): Promise<Rendered> {
    const body = { model: request.model, ...fields, ...(request.kwargs && fields.messages ? { chat_template_kwargs: request.kwargs } : {}) };
    const { body: answer } = await this.client(slot).json<{ tokens?: unknown; token_strs?: unknown }>('POST', '/tokenize', body, this.timeoutMs, undefined, { meter });
    const tokens = answer.tokens;
    if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t) && t >= 0)) {
      throw new RequestFailure('protocol', '/tokenize answered without a list of token ids');
    }
    const strs = Array.isArray(answer.token_strs) && answer.token_strs.every((s) => typeof s === 'string') ? (answer.token_strs as string[]) : [];
    if (fields.return_token_strs && strs.length !== tokens.length) throw new RequestFailure('protocol', '/tokenize answered without a token piece per token (return_token_strs)');
    return { tokens: tokens as number[], strs };
  }
}

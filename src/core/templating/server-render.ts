import pLimit, { type LimitFunction } from 'p-limit';
import type { EndpointClient } from '../http/endpoint-client.ts';
import { RequestFailure } from '../http/failure.ts';
import type { RequestSignal } from '../http/abort.ts';
import { speaksHarmony } from './harmony.ts';
import { chatMessages, type TemplateKwargs } from './messages.ts';

/** Whether an endpoint renders chat through `/tokenize`, and whether its model speaks harmony. */
export interface ServerProbe {
  renders: boolean;
  harmony: boolean;
  /** Why it does not render, when it does not. */
  reason: string | null;
}

/** `/tokenize` requests in flight per endpoint (each may keep a socket open: 1,000 endpoints × 32 ran out of file descriptors)… */
const TOKENIZE_CONCURRENCY = 4;
/** …and over all endpoints, so rendering never floods the client or the servers. */
const TOKENIZE_TOTAL = 256;
/** Rendered prompts kept for reuse (token ids of ~100 tokens each: a few tens of MB at most). */
const CACHE_ENTRIES = 50_000;

/**
 * Renders prompts exactly as an endpoint's chat endpoint would, as token ids from vLLM's
 * `POST /tokenize` with `messages` and `add_generation_prompt`. Lazily, as each batch is formed
 * (never the whole input up front); each distinct (model, system, prompt) once, shared by every
 * endpoint serving that model and by batches asking for it while it is in flight; at most
 * TOKENIZE_CONCURRENCY requests per endpoint and TOKENIZE_TOTAL in all.
 */
export class ServerRenderer {
  private readonly cache = new Map<string, Promise<Uint32Array>>();
  private readonly probes = new Map<string, Promise<ServerProbe>>();
  private readonly limits = new Map<number, LimitFunction>();
  private readonly total = pLimit(TOKENIZE_TOTAL);
  /** Prompts rendered by a `/tokenize` request, and prompts served from the cache (or a request in flight). */
  readonly counts = { rendered: 0, reused: 0 };

  constructor(
    private readonly client: (slot: number) => EndpointClient,
    private readonly timeoutMs: number,
  ) {}

  /** One rendering of a short conversation per endpoint and model, kept for the pool's lifetime. */
  probe(slot: number, model: string): Promise<ServerProbe> {
    const key = `${slot}\n${model}`;
    let probe = this.probes.get(key);
    if (!probe) {
      probe = this.tokenize(slot, model, 'Hi', undefined, true).then(
        ({ strs }) => ({ renders: true, harmony: speaksHarmony(strs?.join('') ?? ''), reason: null }),
        (err: unknown) => {
          const failure = RequestFailure.from(err);
          // Only the server's own refusal (a 4xx, a body without tokens) says it cannot render; ask again after anything else (5xx, resets).
          const refused = failure.kind === 'protocol' || (failure.kind === 'http' && failure.status !== undefined && failure.status < 500);
          if (!refused) this.probes.delete(key);
          return { renders: false, harmony: false, reason: failure.message };
        },
      );
      this.probes.set(key, probe);
    }
    return probe;
  }

  /** Forgets an endpoint's probes (after it came back, perhaps with another server). */
  forget(slot: number): void {
    for (const key of this.probes.keys()) if (key.startsWith(`${slot}\n`)) this.probes.delete(key);
  }

  /**
   * Each prompt's token ids, or the failure `/tokenize` answered for it with a 400 (that prompt's
   * own fault). Any other failure rejects: the endpoint is at fault, not the prompts.
   */
  async render(slot: number, model: string, system: string | undefined, prompts: readonly string[], kwargs: TemplateKwargs, signal: RequestSignal): Promise<Array<number[] | RequestFailure>> {
    const settled = await Promise.allSettled(prompts.map((p) => this.rendered(slot, model, system, p, kwargs, signal)));
    return settled.map((s) => {
      if (s.status === 'fulfilled') return Array.from(s.value);
      const failure = RequestFailure.from(s.reason);
      if (failure.kind === 'http' && failure.status === 400) return failure;
      throw failure;
    });
  }

  private rendered(slot: number, model: string, system: string | undefined, prompt: string, kwargs: TemplateKwargs, signal: RequestSignal): Promise<Uint32Array> {
    const key = JSON.stringify([model, system ?? '', prompt, kwargs ?? null]);
    const hit = this.cache.get(key);
    if (hit) {
      this.counts.reused++;
      this.cache.delete(key); // refreshed: the oldest entry goes first
      this.cache.set(key, hit);
      return hit;
    }
    const pending = this.limit(slot)(() =>
      this.total(() => {
        if (signal.aborted) throw new RequestFailure('cancelled', 'cancelled');
        this.counts.rendered++;
        return this.tokenize(slot, model, prompt, system, false, kwargs);
      }),
    ).then(({ tokens }) => Uint32Array.from(tokens));
    pending.catch(() => this.cache.get(key) === pending && this.cache.delete(key));
    this.cache.set(key, pending);
    if (this.cache.size > CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    return pending;
  }

  private limit(slot: number): LimitFunction {
    let limit = this.limits.get(slot);
    if (!limit) this.limits.set(slot, (limit = pLimit(TOKENIZE_CONCURRENCY)));
    return limit;
  }

  private async tokenize(slot: number, model: string, prompt: string, system: string | undefined, strs: boolean, kwargs?: TemplateKwargs): Promise<{ tokens: number[]; strs: string[] | null }> {
    const body = {
      model,
      messages: chatMessages(prompt, system),
      add_generation_prompt: true,
      ...(strs ? { return_token_strs: true } : {}),
      ...(kwargs ? { chat_template_kwargs: kwargs } : {}),
    };
    const { body: answer } = await this.client(slot).json<{ tokens?: unknown; token_strs?: unknown }>('POST', '/tokenize', body, this.timeoutMs);
    const tokens = answer.tokens;
    if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t) && t >= 0)) {
      throw new RequestFailure('protocol', '/tokenize answered without a list of token ids');
    }
    const tokenStrs = Array.isArray(answer.token_strs) ? answer.token_strs.filter((s): s is string => typeof s === 'string') : null;
    return { tokens: tokens as number[], strs: tokenStrs };
  }
}

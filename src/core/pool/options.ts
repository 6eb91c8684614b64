import { DEFAULT_COOL_DOWN, type CoolDown } from './breaker.ts';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.ts';
import type { Route } from '../http/base-url.ts';
import type { Credential } from '../http/credential.ts';
import type { TemplateSetting } from '../templating/setting.ts';
import type { GenerationParams } from '../requests/generation-params.ts';

/** Where each prompt goes (routing.ts scores them; Aurora-Swarm's i mod n is round-robin). */
export type RouteStrategy = 'round-robin' | 'least-requests' | 'least-load' | 'kv-cache' | 'prefix-aware';

/** How the pool talks to the swarm; shared by every run on it. Defaults follow Aurora-Swarm's VLLMPool. */
export interface PoolOptions {
  /** vLLM `--api-key`, sent as a Bearer token to every endpoint without a credential of its own. */
  apiKey?: string;
  /** Each endpoint's own key source (its hostfile `key=`, a key command), keyed by endpointId. */
  credentials?: ReadonlyMap<string, Credential>;
  /** PEM of CAs trusted on top of Node's bundled roots for https services (`--ca-file`). */
  caCertificates?: string;
  /** Requests in flight across the whole pool (a batch holds one slot). */
  concurrency: number;
  /** Keep-alive connections per endpoint. */
  connectionsPerEndpoint: number;
  /** Deadline of one individual request, and the floor of a batch's. */
  timeoutMs: number;
  /** A batch gets `max(timeout, ceil(n / maxNumSeqs) * timeoutPerSequence)`, capped by batchTimeoutCapMs. */
  timeoutPerSequenceMs: number;
  batchTimeoutCapMs?: number;
  /** The servers' `--max-num-seqs`: how many sequences run at once, for wave-scaled timeouts. */
  maxNumSeqs: number;
  /** vLLM's VLLM_MAX_COMPLETION_PROMPTS: larger groups are split into several requests. */
  maxPromptsPerRequest: number;
  retry: RetryPolicy;
  /** Re-send the prompts of a failing endpoint (down, timing out, 5xx, stalled) to the healthy ones. */
  failover: boolean;
  /** A prompt fails once this many endpoints failed it. */
  maxEndpointFailures: number;
  /** A failing endpoint sits out this long (doubling per failure in a row) before a real request probes it. */
  coolDown: CoolDown;
  /** A streamed request with no event for this long (or 20× the run's p99 inter-token gap, if larger) is stalled. */
  stallTimeoutMs: number;
  /** Send a hung request's prompts elsewhere too once the other endpoints are idle; the first answer wins. */
  hedge: boolean;
  /** …when it has taken this many times the run's median request, and at least hedgeMinMs. */
  hedgeFactor: number;
  hedgeMinMs: number;
  /** Where prompts go: Aurora-Swarm's round-robin (default), or by load (see routing.ts). */
  route: RouteStrategy;
  /** Deadline of `/v1/models` and `/health` lookups. */
  lookupTimeoutMs: number;
  /** Ways to reach endpoints other than their own address (tunnels), keyed by endpointId. */
  routes?: ReadonlyMap<string, Route>;
  /**
   * After a request failed because its route (an SSH tunnel) is gone: resolves true once the
   * route carries traffic again (the prompts are then re-sent to the same endpoint), false when it
   * did not come back within the caller's bound (they then fail over). Unset: routes never heal.
   */
  awaitRoute?: (endpointId: string, signal: AbortSignal) => Promise<boolean>;
}

export const DEFAULT_POOL_OPTIONS: PoolOptions = {
  concurrency: 512,
  connectionsPerEndpoint: 256,
  timeoutMs: 300_000,
  timeoutPerSequenceMs: 60_000,
  maxNumSeqs: 256,
  maxPromptsPerRequest: 1024,
  retry: DEFAULT_RETRY,
  failover: true,
  maxEndpointFailures: 6,
  coolDown: DEFAULT_COOL_DOWN,
  stallTimeoutMs: 10_000,
  hedge: true,
  hedgeFactor: 2,
  hedgeMinMs: 1_000,
  route: 'round-robin',
  lookupTimeoutMs: 10_000,
};

/** What each request asks for; fixed for one run: the generation parameters, and how the pool sends them. */
export interface GenerationOptions extends GenerationParams {
  /** Budget when sizing: min(defaultMaxTokens, max(128, max_model_len - chars/4 - contextBuffer)). */
  defaultMaxTokens?: number;
  contextBuffer?: number;
  /** Aurora-Swarm's fall-back: a reasoning model's truncated chain of thought becomes the text. */
  reasoningFallback?: boolean;
  /**
   * Unstreamed lists ask for each answer's token ids (`return_token_ids`), the only per-prompt token
   * count vLLM gives a list (default true). They make the response ~2.5× longer — for the server to
   * write and us to read: off for throughput runs (rows' token counts are then null; totals stay).
   */
  tokenIds?: boolean;
  /** `stream: true`: each prompt's answer is final at its finish_reason; TTFT, TPOT and ITL are measured. */
  stream?: boolean;
  /** Batches only: how prompts meet the chat template (unset: raw text, as Aurora-Swarm sends). */
  template?: TemplateSetting;
}

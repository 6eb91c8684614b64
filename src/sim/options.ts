import { batchDefaults, GPUS, kvCacheTokens } from './step-model.ts';
import { LATEST_VERSION, versionProfile, type ContextError } from './versions.ts';

/** Knobs of one simulated vLLM server. Defaults mirror a small, fast, healthy server. */
export interface SimOptions {
  /**
   * The vLLM release to behave as ("0.11.0", "0.13", "latest"): its profile sets `errorFormat`,
   * `contextError`, `cacheMetric`, `maxPrompts`, `chatBatch`, `returnTokenIds`, `tokenLatencyMetric` and the
   * field(s) of `reasoning: 'auto'`, unless given. Without it the simulator keeps its historical mix
   * (nested errors, ≤0.10.1 wording, the cap, kv gauge, no batch chat endpoint, token ids, ITL histogram).
   */
  vllmVersion?: string;
  /** Served model name (`--served-model-name`). */
  model: string;
  /** Context window; reported in /v1/models and enforced per prompt. */
  maxModelLen: number;
  /** Prompt-list cap of /v1/completions (vLLM's VLLM_MAX_COMPLETION_PROMPTS); undefined = none, as before PR #47845. */
  maxPrompts?: number;
  /** Serves `POST /v1/chat/completions/batch` (vLLM ≥ 0.19): a list of conversations in one request. */
  chatBatch: boolean;
  /** Honours `return_token_ids` (vLLM ≥ 0.10.2); older releases ignore the field. */
  returnTokenIds: boolean;
  /** Per-token latency histogram name(s) in /metrics, by version. */
  tokenLatencyMetric: 'tpot' | 'both' | 'itl';
  /** Output tokens per streamed delta (vLLM's `--stream-interval`): a delta is not a token. */
  streamInterval: number;
  /**
   * `fixed`: each sequence holds one of `maxNumSeqs` slots for ttft + tokens × tpot, whatever its prompt
   * (the historical model). `vllm`: vLLM V1's scheduler modeled step by step — KV cache in blocks,
   * chunked prefill, decode steps that slow with batch and context, preemption, prefix caching — with
   * a modeled GPU's costs (step-model.ts); ttft and tpot then do nothing, slowFactor scales the steps.
   */
  scheduler: 'fixed' | 'vllm';
  /** The modeled GPU (`vllm` scheduler): its step costs, KV capacity and vLLM's batch defaults for it. */
  gpu: keyof typeof GPUS;
  /** KV-cache capacity per engine in tokens; default: what the modeled GPU's memory holds. */
  kvCacheTokens?: number;
  /** Tokens one engine step computes at most (`--max-num-batched-tokens`); default: vLLM's for the version and GPU. */
  maxNumBatchedTokens?: number;
  /** vLLM V1 caches prompt blocks by hash by default (`--no-enable-prefix-caching` turns it off). */
  enablePrefixCaching: boolean;
  /** Sequences in flight per engine (`--max-num-seqs`); the rest queue. Default 256, or vLLM's for the version and GPU with the `vllm` scheduler. */
  maxNumSeqs: number;
  /** Engines per server (`--data-parallel-size`), each with its own slots, front end and `engine` gauges. */
  dataParallel: number;
  /**
   * Fixed cost per HTTP generation request, serialized per server: vLLM's API server is one
   * Python process, so each request occupies the front end before its sequences are scheduled.
   */
  requestOverheadMs: number;
  /** Time to first token per sequence. */
  ttftMs: number;
  /** Time per output token per sequence. */
  tpotMs: number;
  /** `echo` answers `completion: <prompt>`; `lorem` answers seeded lorem-ipsum words. */
  reply: 'echo' | 'lorem';
  /**
   * The model's chat format: `chatml`, `llama3` (which trims each message's content), or `harmony` as gpt-oss: chat then answers as a reasoning
   * model, and a raw completion of a rendered harmony conversation comes back in harmony channels
   * (`<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…`).
   */
  chatTemplate: 'chatml' | 'harmony' | 'llama3';
  /**
   * Lorem answers end at a sampled end-of-sequence, lognormal around this many tokens, whatever
   * max_tokens: a model stops when it is done, not at its budget (ignore_eos fills the budget).
   */
  answerTokens: number;
  /**
   * Chat reasoning field(s), by vLLM version: `reasoning_content` up to 0.11.0, `both` from PR #27752
   * (0.11.1) through 0.15.x, `reasoning` alone from 0.16.0 (PR #33402); `auto`: those of `vllmVersion`.
   */
  reasoning: 'none' | 'auto' | 'reasoning' | 'reasoning_content' | 'both';
  /** Seeds fault decisions, lorem text and choice shuffling. */
  seed: number;
  /** Probability 0..1 that a generation request is answered with `faultStatus`. */
  faultRate: number;
  faultStatus: number;
  /** Faults, hangs and `healthStatus` apply only after this many generation requests. */
  faultAfter: number;
  /** After this many generation requests every connection is reset; undefined = never. */
  dieAfter?: number;
  /** Generation requests (after `faultAfter`) are accepted but never answered. */
  hang: boolean;
  /** Multiplies ttft and tpot. */
  slowFactor: number;
  /** Streamed answers go silent after this many SSE events (role, token and usage chunks) and stay open. */
  stallAfterChunks?: number;
  /** Streamed answers lose their connection after this many SSE events, as when vLLM dies mid-answer. */
  dropAfterChunks?: number;
  /** Status of GET /health (after `faultAfter`). */
  healthStatus: number;
  /** Nothing listens for this long after start(): clients see connection refused, as while vLLM loads. */
  bootMs: number;
  /** Return choices out of array order (index fields stay correct). */
  shuffleChoices: boolean;
  /** vLLM >=0.10.1 nests errors under `error`; older versions send a flat `object:"error"` body. */
  errorFormat: 'nested' | 'flat';
  /** `generate` serves completions and chat; `embed` (a pooling model) serves only `/v1/embeddings`. */
  task: 'generate' | 'embed';
  /** Length of the simulated embedding vectors. */
  embeddingDim: number;
  /** Which vLLM wording (and `param`) a context overflow is rejected with. */
  contextError: ContextError;
  /** `/metrics` KV-cache gauge: `vllm:gpu_cache_usage_perc`, `vllm:kv_cache_usage_perc`, or both. */
  cacheMetric: 'gpu' | 'both' | 'kv';
  /** vLLM `--api-key`: `/v1/*` answers 401 without `Authorization: Bearer <key>`; `/health` and `/metrics` stay open. */
  apiKey?: string;
}

export const DEFAULT_SIM_OPTIONS: SimOptions = Object.freeze({
  model: 'sim-model',
  maxModelLen: 8192,
  maxPrompts: 1024,
  chatBatch: false,
  returnTokenIds: true,
  tokenLatencyMetric: 'itl',
  streamInterval: 1,
  scheduler: 'fixed',
  gpu: 'h100',
  enablePrefixCaching: true,
  maxNumSeqs: 256,
  dataParallel: 1,
  requestOverheadMs: 2,
  ttftMs: 20,
  tpotMs: 1,
  reply: 'echo',
  answerTokens: 128,
  chatTemplate: 'chatml',
  reasoning: 'none',
  seed: 0,
  faultRate: 0,
  faultStatus: 500,
  faultAfter: 0,
  hang: false,
  slowFactor: 1,
  healthStatus: 200,
  bootMs: 0,
  shuffleChoices: false,
  errorFormat: 'nested',
  task: 'generate',
  embeddingDim: 384,
  contextError: 'requested',
  cacheMetric: 'kv',
});

/** Defaults overlaid with the given options; `undefined` values keep the default. Throws RangeError on nonsense. */
export function resolveSimOptions(partial: Partial<SimOptions> = {}): SimOptions {
  const given: Partial<SimOptions> = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined));
  const profile = given.vllmVersion === undefined ? undefined : versionProfile(given.vllmVersion);
  const fromProfile: Partial<SimOptions> = profile
    ? {
        errorFormat: profile.errorFormat,
        contextError: profile.contextError,
        cacheMetric: profile.cacheMetric,
        maxPrompts: profile.maxPrompts,
        chatBatch: profile.chatBatch,
        returnTokenIds: profile.returnTokenIds,
        tokenLatencyMetric: profile.tokenLatencyMetric,
      }
    : {};
  // A KV capacity, a GPU or a token budget only means something to the vLLM scheduler: asking for one asks for it.
  if (given.scheduler === undefined && (given.kvCacheTokens !== undefined || given.gpu !== undefined || given.maxNumBatchedTokens !== undefined)) given.scheduler = 'vllm';
  const o: SimOptions = { ...DEFAULT_SIM_OPTIONS, ...fromProfile, ...given };
  if (o.scheduler === 'vllm') resolveScheduler(o, given);
  // gpt-oss is a reasoning model: its chat answers carry the analysis channel as reasoning.
  if (o.chatTemplate === 'harmony' && partial.reasoning === undefined) o.reasoning = 'auto';
  if (o.reasoning === 'auto') o.reasoning = profile?.reasoningField ?? 'reasoning';
  const atLeast = (name: keyof SimOptions, min: number, integer = true): void => {
    const v = o[name];
    if (typeof v !== 'number' || !(v >= min) || (integer && !Number.isInteger(v))) {
      throw new RangeError(`sim option ${name} must be ${integer ? 'an integer' : 'a number'} >= ${min}, got ${String(v)}`);
    }
  };
  atLeast('maxModelLen', 1);
  if (o.maxPrompts !== undefined) atLeast('maxPrompts', 1);
  if (o.scheduler !== 'fixed' && o.scheduler !== 'vllm') throw new RangeError(`sim option scheduler must be fixed or vllm, got ${String(o.scheduler)}`);
  atLeast('maxNumSeqs', 1);
  if (o.maxNumBatchedTokens !== undefined) atLeast('maxNumBatchedTokens', 1);
  if (o.kvCacheTokens !== undefined) atLeast('kvCacheTokens', 16);
  if (o.kvCacheTokens !== undefined && o.kvCacheTokens < o.maxModelLen) {
    // vLLM refuses to start when one sequence of max_model_len would not fit in its KV cache.
    throw new RangeError(`sim option kvCacheTokens (${o.kvCacheTokens}) must hold one sequence of maxModelLen (${o.maxModelLen}) tokens`);
  }
  atLeast('dataParallel', 1);
  atLeast('faultAfter', 0);
  atLeast('embeddingDim', 1);
  for (const name of ['dieAfter', 'stallAfterChunks', 'dropAfterChunks'] as const) if (o[name] !== undefined) atLeast(name, 0);
  atLeast('answerTokens', 1);
  atLeast('streamInterval', 1);
  for (const name of ['requestOverheadMs', 'ttftMs', 'tpotMs', 'slowFactor', 'bootMs'] as const) atLeast(name, 0, false);
  if (!(o.faultRate >= 0 && o.faultRate <= 1)) throw new RangeError(`sim option faultRate must be within 0..1, got ${o.faultRate}`);
  const status = (name: 'faultStatus' | 'healthStatus', min: number): void => {
    if (!Number.isInteger(o[name]) || o[name] < min || o[name] > 599) throw new RangeError(`sim option ${name} must be an HTTP status ${min}..599, got ${o[name]}`);
  };
  status('faultStatus', 400);
  status('healthStatus', 200);
  return o;
}

/** The vLLM scheduler's defaults: vLLM's batch sizes for the version and GPU, and the GPU's modeled KV capacity. */
function resolveScheduler(o: SimOptions, given: Partial<SimOptions>): void {
  const gpu = GPUS[o.gpu];
  if (!gpu) throw new RangeError(`sim option gpu must be one of ${Object.keys(GPUS).join(', ')}, got ${String(o.gpu)}`);
  const version = versionProfile(o.vllmVersion ?? LATEST_VERSION).version.split('.').map(Number);
  const defaults = batchDefaults(version, gpu);
  if (given.maxNumSeqs === undefined) o.maxNumSeqs = defaults.maxNumSeqs;
  o.maxNumBatchedTokens ??= defaults.maxNumBatchedTokens;
  o.kvCacheTokens ??= kvCacheTokens(gpu.memoryGb);
}

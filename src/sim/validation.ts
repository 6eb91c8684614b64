import { badRequest, SimError } from './errors.ts';
import type { ContextError } from './versions.ts';

/** A parsed JSON request body: vLLM accepts (and ignores) fields it does not know. */
export type Body = Record<string, unknown>;

export function parseBody(text: string): Body {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest(`Invalid JSON in request body: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('Request body must be a JSON object');
  return value as Body;
}

/** An optional integer field; null counts as absent (vLLM normalizes `max_tokens: null` to the default). */
export function optionalInt(body: Body, key: string, min: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`'${key}' must be an integer, got ${JSON.stringify(v)}`, key);
  if (v < min) throw badRequest(`${key} must be at least ${min}, got ${v}.`, key);
  return v;
}

export function optionalBool(body: Body, key: string, fallback = false): boolean {
  const v = body[key] ?? fallback;
  if (typeof v !== 'boolean') throw badRequest(`'${key}' must be a boolean, got ${JSON.stringify(v)}`, key);
  return v;
}

/** What a stream reports of usage: a trailing usage chunk, and usage on every chunk. */
export interface StreamUsage {
  includeUsage: boolean;
  continuousUsage: boolean;
}

/**
 * vLLM's `stream_options` (StreamOptions + should_include_usage): given at all, `include_usage`
 * defaults to true; `continuous_usage_stats` counts only with it. vLLM rejects stream_options without stream.
 */
export function streamUsage(body: Body, stream: boolean): StreamUsage {
  const options = body['stream_options'];
  if (options === undefined || options === null) return { includeUsage: false, continuousUsage: false };
  if (!stream) throw badRequest('Stream options can only be defined when `stream=True`.', 'stream_options');
  if (typeof options !== 'object' || Array.isArray(options)) throw badRequest(`'stream_options' must be an object`, 'stream_options');
  const flag = (key: string, fallback: boolean): boolean => {
    const v = (options as Body)[key];
    if (v === undefined) return fallback;
    if (v !== null && typeof v !== 'boolean') throw badRequest(`'stream_options.${key}' must be a boolean, got ${JSON.stringify(v)}`, 'stream_options');
    return v === true;
  };
  const includeUsage = flag('include_usage', true);
  return { includeUsage, continuousUsage: includeUsage && flag('continuous_usage_stats', false) };
}

/** The sampling fields both generation endpoints honour. */
export interface SamplingFields {
  stop: string[];
  ignoreEos: boolean;
  /** Absent = not sent (the simulator then keeps its seeded, endpoint-independent answers). */
  temperature: number | undefined;
  seed: number | undefined;
}

export function samplingFields(body: Body): SamplingFields {
  const temperature = body['temperature'];
  if (temperature !== undefined && temperature !== null && (typeof temperature !== 'number' || temperature < 0)) {
    throw badRequest(`temperature must be non-negative, got ${JSON.stringify(temperature)}.`, 'temperature');
  }
  return {
    stop: stopStrings(body),
    ignoreEos: optionalBool(body, 'ignore_eos'),
    temperature: temperature ?? undefined,
    seed: optionalInt(body, 'seed', Number.MIN_SAFE_INTEGER),
  };
}

/** `stop`: a string or a list of strings; empty strings never match. */
function stopStrings(body: Body): string[] {
  const v = body['stop'] ?? [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) {
    throw badRequest(`'stop' must be a string or a list of strings, got ${JSON.stringify(v)}`, 'stop');
  }
  return list.filter((s) => s !== '');
}

/** The `model` field, if it names one. */
export function requestedModel(body: Body): string | undefined {
  const model = body['model'];
  if (model === undefined || model === null || model === '') return undefined;
  if (typeof model !== 'string') throw badRequest(`'model' must be a string`, 'model');
  return model;
}

/** Empty or missing model means the served one, as in vLLM's `_is_model_supported`. */
export function checkModel(requested: string | undefined, served: string): void {
  if (requested !== undefined && requested !== served) throw new SimError(404, `The model \`${requested}\` does not exist.`);
}

/**
 * The output budget of one prompt, rejecting prompts that do not fit in the chosen version's
 * wording. Without an explicit budget the rest of the context is used, as vLLM chat does.
 */
export function outputBudget(promptTokens: number, maxTokens: number | undefined, maxModelLen: number, wording: ContextError): number {
  const fits = maxTokens === undefined ? promptTokens < maxModelLen : promptTokens + maxTokens <= maxModelLen;
  if (!fits) throw contextOverflow(promptTokens, maxTokens, maxModelLen, wording);
  return maxTokens ?? maxModelLen - promptTokens;
}

function contextOverflow(p: number, m: number | undefined, l: number, wording: ContextError): SimError {
  const limit = `This model's maximum context length is ${l} tokens.`;
  if (wording === 'input-tokens') {
    // renderers/params.py truncates the prompt to L - M + 1 tokens before it counts, hence "at least".
    const output = m ?? 0;
    const input = Math.min(p, l - output + 1);
    return badRequest(
      `${limit} However, you requested ${output} output tokens and your prompt contains at least ${input} input tokens, ` +
        `for a total of at least ${input + output} tokens. Please reduce the length of the input prompt or the number of requested output tokens.`,
      'input_tokens',
    );
  }
  if (wording === 'too-large') {
    if (m === undefined || p >= l) return badRequest(`${limit} However, your request has ${p} input tokens. Please reduce the length of the input messages.`);
    return badRequest(`'max_tokens' or 'max_completion_tokens' is too large: ${m}. ${limit.slice(0, -1)} and your request has ${p} input tokens (${m} > ${l} - ${p}).`);
  }
  if (m === undefined) return badRequest(`${limit} However, you requested ${p} tokens in the messages, Please reduce the length of the messages.`);
  return badRequest(`${limit} However, you requested ${p + m} tokens (${p} in the messages, ${m} in the completion). Please reduce the length of the messages or completion.`);
}

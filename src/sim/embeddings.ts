import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { badRequest, type SimError } from './errors.ts';
import { sendJson } from './http.ts';
import type { SimOptions } from './options.ts';
import { hashString, mulberry32 } from './random.ts';
import { countTokens } from './tokenizer.ts';
import { checkModel, requestedModel, type Body } from './validation.ts';

/** vLLM's answer when a model lacks the task an endpoint needs (a generative model asked for embeddings, or the reverse). */
const UNSUPPORTED: Record<string, string> = {
  '/v1/embeddings': 'Embeddings',
  '/v1/completions': 'Completions',
  '/v1/chat/completions': 'Chat Completions',
};

/** The error a server started for `task` gives on `path`, or null when it serves it. */
export function unsupportedApi(task: SimOptions['task'], path: string): SimError | null {
  const embedding = path === '/v1/embeddings';
  if (!(path in UNSUPPORTED) || embedding === (task === 'embed')) return null;
  return badRequest(`The model does not support ${UNSUPPORTED[path]} API`);
}

/** A deterministic unit vector per text: the same text always embeds the same, different texts (almost surely) differ. */
export function embedText(text: string, dim: number, seed: number): number[] {
  const random = mulberry32(hashString(text) ^ seed);
  const v = Array.from({ length: dim }, () => random() * 2 - 1);
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/**
 * `POST /v1/embeddings` as a vLLM pooling model answers it: `input` a string or a list (token-id
 * lists too); `encoding_format` float or base64 (little-endian float32, the OpenAI SDKs' default).
 */
export function serveEmbeddings(body: Body, res: ServerResponse, options: SimOptions): void {
  checkModel(requestedModel(body), options.model);
  const input = body['input'];
  const list = typeof input === 'string' || (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'number')) ? [input] : input;
  if (!Array.isArray(list) || !list.length || !list.every((x) => typeof x === 'string' || (Array.isArray(x) && x.every((t) => typeof t === 'number')))) {
    throw badRequest("'input' must be a string, a non-empty list of strings, or token-id lists", 'input');
  }
  const format = body['encoding_format'] ?? 'float';
  if (format !== 'float' && format !== 'base64') throw badRequest(`encoding_format must be 'float' or 'base64', got ${JSON.stringify(format)}`, 'encoding_format');
  const texts = list.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
  const tokens = list.map((x, i) => (typeof x === 'string' ? countTokens(texts[i]!) : (x as number[]).length));
  const over = tokens.find((t) => t > options.maxModelLen);
  if (over !== undefined) {
    throw badRequest(`This model's maximum context length is ${options.maxModelLen} tokens. However, you requested ${over} tokens in the input for embedding generation. Please reduce the length of the input.`);
  }
  const data = texts.map((text, index) => {
    const vector = embedText(text, options.embeddingDim, options.seed);
    const embedding = format === 'float' ? vector : Buffer.from(new Float32Array(vector).buffer).toString('base64');
    return { index, object: 'embedding', embedding };
  });
  const promptTokens = tokens.reduce((s, t) => s + t, 0);
  sendJson(res, 200, {
    id: `embd-${randomUUID().replaceAll('-', '')}`,
    object: 'list',
    created: Math.floor(Date.now() / 1000),
    model: options.model,
    data,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens, completion_tokens: 0, prompt_tokens_details: null },
  });
}

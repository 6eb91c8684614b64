import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { submitSpread } from './data-parallel.ts';
import type { SequenceWork, SimEngine } from './engine.ts';
import { EventStream } from './event-stream.ts';
import { sendText } from './http.ts';
import type { Metrics } from './metrics.ts';
import type { SimOptions } from './options.ts';
import { mulberry32 } from './random.ts';
import { harmonyOutput } from './harmony.ts';
import { generate, outputTokens, type Output } from './replies.ts';
import { encode, outputTokenId } from './tokenizer.ts';
import { checkModel, outputBudget, type Body, type SamplingFields, type StreamUsage } from './validation.ts';

/** One prompt as the simulator sees it. */
export interface Prompt {
  /** The prompt as the model reads it (echoed back by completions' `echo`). */
  text: string;
  /** What the reply answers: the last user turn of a conversation, else the whole text. */
  question: string;
  tokens: number;
  /** A token-id prompt's ids as sent. */
  ids?: number[];
  /** A raw completion of a rendered harmony conversation: the model answers in harmony channels. */
  harmony?: boolean;
}

/** What /v1/completions and /v1/chat/completions have in common once parsed. */
export interface GenerationRequest extends StreamUsage, SamplingFields {
  model: string | undefined;
  prompts: Prompt[];
  n: number;
  /** Undefined = the rest of the context window. */
  maxTokens: number | undefined;
  /** Top logprobs per output token (completions `logprobs`, chat `top_logprobs`); undefined = no logprobs. */
  logprobs: number | undefined;
  /** Completions only: text starts with the prompt. */
  echo: boolean;
  stream: boolean;
  /** vLLM ≥ 0.10.2's `return_token_ids`: prompt and output token ids beside the text. */
  returnTokenIds: boolean;
  /** Completions: special tokens left out of the text (vLLM's default `skip_special_tokens: true`). */
  skipSpecialTokens?: boolean;
}

/** The parts that differ between the two generation endpoints: request parsing and choice shapes. */
export interface GenerationApi {
  readonly idPrefix: string;
  readonly object: string;
  readonly chunkObject: string;
  /** Whether outputs think before answering (reasoning-mode chat). */
  readonly reasons: boolean;
  /** Schema validation; throws SimError. */
  parse(body: Body): GenerationRequest;
  choice(output: Output, index: number, prompt: Prompt, request: GenerationRequest): object;
  /** Streamed choices sent once, before the first token's (chat: the assistant role of each choice, index order). */
  openingChoices(request: GenerationRequest): object[];
  /** The streamed choice carrying output tokens `from`…`to` (one kind: thinking or answer); the last token's carries the finish reason. */
  streamChoice(output: Output, from: number, to: number, index: number, prompt: Prompt, request: GenerationRequest): object;
  /** Fields of the whole (non-streamed) response beside its choices. */
  responseFields?(request: GenerationRequest): object;
}

export interface GenerationContext {
  readonly options: SimOptions;
  /** Data-parallel engines (one unless `dataParallel`). */
  readonly engines: readonly SimEngine[];
  readonly metrics: Metrics;
}

/**
 * Validates, schedules and answers one generation request (`arrivedAt`: when it reached the server,
 * where modeled time starts). Throws SimError before anything is
 * sent; afterwards the answer (JSON once all sequences finished, or SSE token by token) is
 * written by engine callbacks, and a client that disconnects frees its slots.
 */
export function serveGeneration(api: GenerationApi, body: Body, res: ServerResponse, ctx: GenerationContext, arrivedAt?: number): void {
  const { options, metrics } = ctx;
  const request = api.parse(body);
  metrics.promptsReceived += request.prompts.length;
  checkModel(request.model, options.model);
  // Every prompt is checked before any is scheduled: one over-long prompt fails the whole list, as in vLLM.
  const budgets = request.prompts.map((p) => outputBudget(p.tokens, request.maxTokens, options.maxModelLen, options.contextError));
  const { n } = request;
  const outputs = request.prompts.flatMap((p, i) =>
    Array.from({ length: n }, (_, j) => {
      const output = generate(p.question, j, { ...request, maxTokens: budgets[i]! }, options, api.reasons || Boolean(p.harmony));
      return p.harmony ? harmonyOutput(output) : output;
    }),
  );
  const promptOf = (index: number): Prompt => request.prompts[Math.floor(index / n)]!;
  const tokenCounts = outputs.map(outputTokens);
  const usage = usageOf(request.prompts.map((p) => p.tokens), tokenCounts);
  metrics.promptTokens += usage.prompt_tokens;
  const work = sequenceWork(tokenCounts, request, body, options, n);

  const id = `${api.idPrefix}-${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const envelope = (object: string, choices: object[], extra: object = {}): object =>
    ({ id, object, created, model: options.model, choices, ...extra });
  let remaining = outputs.length;
  const finished = (index: number): boolean => {
    metrics.sequenceFinished(outputs[index]!);
    return --remaining === 0;
  };

  let cancel: () => void;
  if (!request.stream) {
    // The answer is written out now, while the engine models its sequences: a thousand lists finishing
    // together then cost one write each, not a burst of JSON that would make the last ones late.
    const order = choiceOrder(outputs.length, options);
    const answer = JSON.stringify(envelope(api.object, order.map((i) => api.choice(outputs[i]!, i, promptOf(i), request)), { usage, ...api.responseFields?.(request) }));
    cancel = submitSpread(ctx.engines, work, request.n, {
      onDone(index) {
        if (finished(index)) sendText(res, 200, 'application/json', answer);
      },
    }, arrivedAt);
  } else {
    const stream = new EventStream(res, options);
    // vLLM's continuous usage counts the prompt of the choice and that choice's tokens so far.
    const sendChoice = (choice: object, index: number, completionTokens: number): void => {
      const extra = request.continuousUsage ? { usage: usageOf([promptOf(index).tokens], [completionTokens]) } : {};
      stream.send(envelope(api.chunkObject, [choice], extra));
    };
    let opened = false;
    // With --stream-interval K a delta carries K tokens (fewer at the end, or where thinking turns to answer).
    const unsent = new Array<number>(outputs.length).fill(0);
    cancel = submitSpread(ctx.engines, work, request.n, {
      onToken(index, k) {
        if (!opened) {
          opened = true;
          api.openingChoices(request).forEach((choice, i) => sendChoice(choice, i, 0));
        }
        const output = outputs[index]!;
        // The last token, or the last of the thinking (the next one is the answer's first).
        const end = k >= tokenCounts[index]! - 1 || k + 1 === (output.reasoning?.length ?? 0);
        if (!end && k + 1 - unsent[index]! < options.streamInterval) return;
        sendChoice(api.streamChoice(output, unsent[index]!, k, index, promptOf(index), request), index, Math.min(k + 1, tokenCounts[index]!));
        unsent[index] = k + 1;
      },
      onDone(index) {
        if (!finished(index)) return;
        if (request.includeUsage) stream.send(envelope(api.chunkObject, [], { usage }));
        stream.end();
      },
    }, arrivedAt);
  }
  res.on('close', () => {
    if (!res.writableFinished) cancel();
  });
}

/**
 * What the engines schedule per sequence: its output tokens, and for the vLLM scheduler model its
 * prompt's ids (the prefill, and the blocks the prefix cache sees) and the request's `cache_salt`.
 */
function sequenceWork(tokenCounts: readonly number[], request: GenerationRequest, body: Body, options: SimOptions, n: number): SequenceWork[] {
  if (options.scheduler !== 'vllm') return tokenCounts.map((tokens) => ({ tokens }));
  const salt = typeof body['cache_salt'] === 'string' ? body['cache_salt'] : undefined;
  const ids = request.prompts.map(promptTokenIds);
  return tokenCounts.map((tokens, i) => ({ tokens, promptIds: ids[Math.floor(i / n)]!, ...(salt ? { salt } : {}) }));
}

/** The ids the model read for a prompt. */
export function promptTokenIds(prompt: Prompt): number[] {
  return prompt.ids ?? encode(prompt.text);
}

/** One id per output token (thinking included), in order, so `len(token_ids) == completion_tokens` as in vLLM. */
export function outputTokenIds(tokens: readonly string[]): number[] {
  return tokens.map(outputTokenId);
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Prompt tokens count once per prompt (not once per choice), as in vLLM. */
function usageOf(promptTokens: readonly number[], completionTokens: readonly number[]): Usage {
  const prompt = promptTokens.reduce((sum, t) => sum + t, 0);
  const completion = completionTokens.reduce((sum, t) => sum + t, 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** Choice indices in array order: `index = prompt * n + j`, or a seeded shuffle that is never the identity. */
function choiceOrder(count: number, options: SimOptions): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  if (!options.shuffleChoices || count < 2) return order;
  const random = mulberry32(options.seed + count);
  for (let i = count - 1; i > 0; i--) {
    const k = Math.floor(random() * (i + 1));
    [order[i], order[k]] = [order[k]!, order[i]!];
  }
  return order.every((v, i) => v === i) ? order.reverse() : order;
}

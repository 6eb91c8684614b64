import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Engine } from './engine.ts';
import { endEventStream, openEventStream, sendJson, writeEvent } from './http.ts';
import type { Metrics } from './metrics.ts';
import type { SimOptions } from './options.ts';
import { mulberry32 } from './random.ts';
import { generate, outputTokens, type Output } from './replies.ts';
import { checkModel, outputBudget, type Body } from './validation.ts';

/** One prompt as the simulator sees it: the text its reply answers and its token count. */
export interface Prompt {
  text: string;
  tokens: number;
}

/** What /v1/completions and /v1/chat/completions have in common once parsed. */
export interface GenerationRequest {
  model: string | undefined;
  prompts: Prompt[];
  n: number;
  /** Undefined = the rest of the context window. */
  maxTokens: number | undefined;
  /** Completions only: text starts with the prompt. */
  echo: boolean;
  stream: boolean;
  includeUsage: boolean;
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
  /** The streamed choice deltas of one output, in order; the last carries the finish reason. */
  streamChoices(output: Output, index: number, prompt: Prompt, request: GenerationRequest): object[];
}

export interface GenerationContext {
  readonly options: SimOptions;
  readonly engine: Engine;
  readonly metrics: Metrics;
}

/**
 * Validates, schedules and answers one generation request. Throws SimError before anything is
 * sent; afterwards the answer (JSON once all sequences finished, or SSE as they finish) is
 * written by engine callbacks, and a client that disconnects frees its slots.
 */
export function serveGeneration(api: GenerationApi, body: Body, res: ServerResponse, ctx: GenerationContext): void {
  const { options, engine, metrics } = ctx;
  const request = api.parse(body);
  metrics.promptsReceived += request.prompts.length;
  checkModel(request.model, options.model);
  // Every prompt is checked before any is scheduled: one over-long prompt fails the whole list, as in vLLM.
  const budgets = request.prompts.map((p) => outputBudget(p.tokens, request.maxTokens, options.maxModelLen));
  const { n } = request;
  const outputs = request.prompts.flatMap((p, i) =>
    Array.from({ length: n }, (_, j) => generate(p.text, j, budgets[i]!, options, api.reasons)),
  );
  const promptOf = (index: number): Prompt => request.prompts[Math.floor(index / n)]!;
  const usage = usageOf(request.prompts, outputs);
  metrics.promptTokens += usage.prompt_tokens;

  const id = `${api.idPrefix}-${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const envelope = (object: string, choices: object[], extra: object = {}): object =>
    ({ id, object, created, model: options.model, choices, ...extra });
  const durations = outputs.map((o) => (options.ttftMs + outputTokens(o) * options.tpotMs) * options.slowFactor);
  let remaining = outputs.length;

  if (request.stream) openEventStream(res);
  const cancel = engine.submit(durations, (index) => {
    const output = outputs[index]!;
    metrics.sequenceFinished(output);
    if (request.stream) {
      for (const choice of api.streamChoices(output, index, promptOf(index), request)) {
        writeEvent(res, envelope(api.chunkObject, [choice]));
      }
    }
    if (--remaining > 0) return;
    if (!request.stream) {
      const order = choiceOrder(outputs.length, options);
      const choices = order.map((i) => api.choice(outputs[i]!, i, promptOf(i), request));
      sendJson(res, 200, envelope(api.object, choices, { usage }));
      return;
    }
    if (request.includeUsage) writeEvent(res, envelope(api.chunkObject, [], { usage }));
    endEventStream(res);
  });
  res.on('close', () => {
    if (!res.writableFinished) cancel();
  });
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Prompt tokens count once per prompt (not once per choice), as in vLLM. */
function usageOf(prompts: readonly Prompt[], outputs: readonly Output[]): Usage {
  const promptTokens = prompts.reduce((sum, p) => sum + p.tokens, 0);
  const completionTokens = outputs.reduce((sum, o) => sum + outputTokens(o), 0);
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
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

import { RequestFailure, serverError } from '../http/failure.ts';
import type { GenerationOptions } from '../pool/options.ts';
import { parseHarmony } from '../templating/harmony.ts';
import { chatMessages } from '../templating/messages.ts';
import type { TemplatePath } from '../templating/setting.ts';

/** A prompt on the wire of `/v1/completions`: text, or token ids rendered by the server. */
export type WirePrompt = string | number[];

/** How a batch's prompts were rendered before sending, and how its answers read back. */
export interface Rendering {
  template: TemplatePath;
  /** The model speaks harmony (gpt-oss): answers keep their special tokens and are split into reasoning and text. */
  harmony: boolean;
}

export const RAW: Rendering = { template: 'none', harmony: false };
/** The server's batch chat endpoint: prompts go as conversations, the server renders and parses. */
export const CHAT_BATCH: Rendering = { template: 'chat-batch', harmony: false };

/** vLLM ≥ 0.19's list-of-conversations chat endpoint (PR #38011). */
export const CHAT_BATCH_PATH = '/v1/chat/completions/batch';

/** Where a batch goes on the wire. */
export function batchPath(rendering: Rendering): typeof CHAT_BATCH_PATH | '/v1/completions' {
  return rendering.template === 'chat-batch' ? CHAT_BATCH_PATH : '/v1/completions';
}

/** What one prompt's choices came to. */
export interface Answer {
  text: string | null;
  reasoning: string | null;
  finishReason: string | null;
  /** Every choice's text when `n` > 1, in choice order. */
  texts?: string[];
  /** Streamed only: when the first and last output arrived (`performance.now()`). */
  stream?: { firstTokenAt: number; lastTokenAt: number };
  /** This prompt's own tokens (its choices' outputs summed), where the server told them apart from the other prompts'. */
  tokens?: PromptTokens;
  /** `/v1/embeddings`: the input's vector (text is then null). */
  embedding?: number[];
  /** Batches: the path its prompt took to the chat template. */
  template?: TemplatePath;
}

/** The sampling fields both request shapes share; extras first so ours win. */
function sampling(gen: GenerationOptions, model: string, maxTokens: number, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { ...gen.extra, model, max_tokens: maxTokens };
  if (gen.temperature !== undefined) body.temperature = gen.temperature;
  if (gen.topP !== undefined) body.top_p = gen.topP;
  if (gen.seed !== undefined) body.seed = gen.seed;
  if (gen.stop?.length) body.stop = gen.stop;
  if (gen.n !== undefined && gen.n !== 1) body.n = gen.n;
  // Each prompt's own token counts: streamed, on every chunk (a delta may hold several tokens); whole, from its ids (vLLM ≥ 0.10.2).
  if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true, continuous_usage_stats: true } });
  return body;
}

/** Individual mode: `POST /v1/chat/completions`, the server applies the chat template. */
export function chatBody(prompt: string, gen: GenerationOptions, model: string, maxTokens: number, stream = false): Record<string, unknown> {
  return { ...sampling(gen, model, maxTokens, stream), messages: chatMessages(prompt, gen.system) };
}

/**
 * Batch mode: one `POST /v1/completions` with the list. Raw text has no system role, so a system
 * prompt is prepended to every prompt; rendered prompts carry it in their conversation.
 */
export function completionsBody(prompts: readonly WirePrompt[], gen: GenerationOptions, model: string, maxTokens: number, stream = false, rendering = RAW): Record<string, unknown> {
  const prompt = rendering.template === 'none' && gen.system ? prompts.map((p) => `${gen.system}\n\n${p as string}`) : prompts;
  const body: Record<string, unknown> = { ...sampling(gen, model, maxTokens, stream), prompt };
  if (!stream && gen.tokenIds !== false) body.return_token_ids = true;
  // A rendered template writes its own BOS, and the chat endpoint tokenizes it without adding one: so must completions.
  if (rendering.template === 'file' || rendering.template === 'skeleton') body.add_special_tokens = false;
  // Harmony's channels are special tokens: kept in the text, they can be split as the chat endpoint does.
  if (rendering.harmony) body.skip_special_tokens = false;
  return body;
}

/** vLLM ≥ 0.19's batch chat endpoint: one conversation per prompt, answered in one response (unstreamed, n = 1). */
export function chatBatchBody(prompts: readonly string[], gen: GenerationOptions, model: string, maxTokens: number): Record<string, unknown> {
  const body: Record<string, unknown> = { ...sampling(gen, model, maxTokens, false), messages: prompts.map((p) => chatMessages(p, gen.system)) };
  if (gen.tokenIds !== false) body.return_token_ids = true;
  return body;
}

/** A batched answer as the chat endpoint would give it: the path recorded, harmony split into reasoning and text. */
export function renderedAnswer(answer: Answer, rendering: Rendering): Answer {
  answer.template = rendering.template;
  if (!rendering.harmony || answer.text === null) return answer;
  const parsed = parseHarmony(answer.text);
  if (!parsed) return answer;
  if (answer.texts) answer.texts = answer.texts.map((t) => parseHarmony(t)?.text ?? t);
  return Object.assign(answer, parsed);
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/** One prompt's own token counts; null where the server did not tell them. */
export interface PromptTokens {
  promptTokens: number | null;
  completionTokens: number | null;
}

export function readUsage(body: unknown): Usage | null {
  const u = (body as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } } | null)?.usage;
  if (typeof u?.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return null;
  return { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens };
}

interface ChatChoice {
  index?: number;
  finish_reason?: string | null;
  message?: { content?: string | null; reasoning?: string | null; reasoning_content?: string | null };
  token_ids?: unknown;
}

interface CompletionChoice {
  index?: number;
  text?: unknown;
  finish_reason?: string | null;
  token_ids?: unknown;
  prompt_token_ids?: unknown;
}

/** A prompt's own tokens from its choices' `token_ids` and the first's `prompt_token_ids` (vLLM ≥ 0.10.2); undefined where the server sent neither. */
function idTokens(choices: ReadonlyArray<{ token_ids?: unknown; prompt_token_ids?: unknown }>): PromptTokens | undefined {
  let completion: number | null = 0;
  for (const c of choices) completion = Array.isArray(c.token_ids) && completion !== null ? completion + c.token_ids.length : null;
  const prompt = choices[0]?.prompt_token_ids;
  const promptTokens = Array.isArray(prompt) ? prompt.length : null;
  return completion === null && promptTokens === null ? undefined : { promptTokens, completionTokens: completion };
}

/**
 * Checks that `choices` hold exactly `expected` choices with every index in 0..expected-1 once, and
 * returns them by index. Anything else fails the request: a server that ignores `n` or drops a
 * prompt would otherwise have another prompt's answer credited to this one.
 */
export function choicesByIndex<C extends { index?: number }>(body: unknown, prompts: number, n: number): C[] {
  const choices = (body as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) {
    // A 200 carrying an error body (some proxies and servers answer so): the server's own words, and another endpoint may answer.
    const error = (body as { error?: unknown } | null)?.error;
    if (error !== undefined) throw new RequestFailure('http', `HTTP 200 with an error: ${serverError(500, JSON.stringify(body)).message.replace(/^HTTP 500: /, '')}`);
    throw new RequestFailure('protocol', `response has no choices (keys: ${Object.keys(body ?? {}).join(', ')})`);
  }
  const expected = prompts * n;
  const byIndex: C[] = new Array(expected);
  let valid = choices.length === expected;
  for (let k = 0; valid && k < choices.length; k++) {
    const c = choices[k] as C;
    // A single choice without an index (some OpenAI-compatible servers) can only be itself.
    const index = expected === 1 && c?.index === undefined ? 0 : c?.index;
    if (!Number.isInteger(index) || index! < 0 || index! >= expected || byIndex[index!]) valid = false;
    else byIndex[index!] = c;
  }
  if (!valid) throw new RequestFailure('protocol', choiceCountMessage(choices.length, prompts, n));
  return byIndex;
}

export function choiceCountMessage(got: number, prompts: number, n: number): string {
  if (n > 1 && got === prompts) return `server returned 1 choice per prompt for n=${n}: it may not support n`;
  const what = prompts === 1 ? `n=${n}` : `${prompts} prompts × n=${n}`;
  return `server returned ${got} choice(s) for ${what}, expected ${prompts * n} with every index once`;
}

/** One chat answer: `content`, with `reasoning` (vLLM ≥ 0.16, both fields 0.11.1–0.15) or `reasoning_content` (older) kept apart. */
export function readChat(body: unknown, n = 1): Answer {
  return chatAnswer(choicesByIndex<ChatChoice>(body, 1, n));
}

/** The batch chat endpoint's answers, choice i for conversation i. */
export function readChatBatch(body: unknown, prompts: number): Answer[] {
  const choices = choicesByIndex<ChatChoice>(body, prompts, 1);
  return choices.map((c) => {
    const answer = chatAnswer([c]);
    const tokens = idTokens([c]);
    if (tokens) answer.tokens = tokens;
    return answer;
  });
}

function chatAnswer(choices: readonly ChatChoice[]): Answer {
  const n = choices.length;
  const msg = choices[0]!.message ?? {};
  const answer: Answer = {
    text: typeof msg.content === 'string' ? msg.content : null,
    reasoning: msg.reasoning ?? msg.reasoning_content ?? null,
    finishReason: choices[0]!.finish_reason ?? null,
  };
  if (n > 1) answer.texts = choices.map((c) => c.message?.content ?? '');
  return answer;
}

/**
 * Splits a list-prompt response back into one answer per prompt, matched by `index` = prompt·n + j;
 * a prompt whose choice came without text gets null (its answer was lost on the way, not refused).
 */
export function readCompletions(body: unknown, promptCount: number, n: number): Array<Answer | null> {
  const choices = choicesByIndex<CompletionChoice>(body, promptCount, n);
  const answers: Array<Answer | null> = new Array(promptCount).fill(null);
  for (let p = 0; p < promptCount; p++) {
    const first = choices[p * n]!;
    if (typeof first.text !== 'string') continue;
    const answer: Answer = { text: first.text, reasoning: null, finishReason: first.finish_reason ?? null };
    const own = choices.slice(p * n, p * n + n);
    if (n > 1) answer.texts = own.map((c) => (typeof c.text === 'string' ? c.text : ''));
    const tokens = idTokens(own);
    if (tokens) answer.tokens = tokens;
    answers[p] = answer;
  }
  return answers;
}

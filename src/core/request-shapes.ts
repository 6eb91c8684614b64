import { RequestFailure } from './http/failure.ts';
import type { GenerationOptions } from './options.ts';

/** What one prompt's choices came to. */
export interface Answer {
  text: string | null;
  reasoning: string | null;
  finishReason: string | null;
  /** Every choice's text when `n` > 1, in choice order. */
  texts?: string[];
  /** Streamed only: output tokens counted from the deltas, and when the first and last arrived (`performance.now()`). */
  stream?: { tokens: number; firstTokenAt: number; lastTokenAt: number };
  /** `/v1/embeddings`: the input's vector (text is then null). */
  embedding?: number[];
}

/** The sampling fields both request shapes share; extras first so ours win. */
function sampling(gen: GenerationOptions, model: string, maxTokens: number, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { ...gen.extra, model, max_tokens: maxTokens };
  if (gen.temperature !== undefined) body.temperature = gen.temperature;
  if (gen.topP !== undefined) body.top_p = gen.topP;
  if (gen.seed !== undefined) body.seed = gen.seed;
  if (gen.stop?.length) body.stop = gen.stop;
  if (gen.n !== undefined && gen.n !== 1) body.n = gen.n;
  if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
  return body;
}

/** Individual mode: `POST /v1/chat/completions`, the server applies the chat template. */
export function chatBody(prompt: string, gen: GenerationOptions, model: string, maxTokens: number, stream = false): Record<string, unknown> {
  const messages = gen.system ? [{ role: 'system', content: gen.system }] : [];
  messages.push({ role: 'user', content: prompt });
  return { ...sampling(gen, model, maxTokens, stream), messages };
}

/**
 * Batch mode: one `POST /v1/completions` with the list. Raw completions have no system role,
 * so a system prompt is prepended to every prompt.
 */
export function completionsBody(prompts: readonly string[], gen: GenerationOptions, model: string, maxTokens: number, stream = false): Record<string, unknown> {
  const prompt = gen.system ? prompts.map((p) => `${gen.system}\n\n${p}`) : prompts;
  return { ...sampling(gen, model, maxTokens, stream), prompt };
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
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
}

interface CompletionChoice {
  index?: number;
  text?: unknown;
  finish_reason?: string | null;
}

/**
 * Checks that `choices` hold exactly `expected` choices with every index in 0..expected-1 once, and
 * returns them by index. Anything else fails the request: a server that ignores `n` or drops a
 * prompt would otherwise have another prompt's answer credited to this one.
 */
export function choicesByIndex<C extends { index?: number }>(body: unknown, prompts: number, n: number): C[] {
  const choices = (body as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) throw new RequestFailure('protocol', `response has no choices (keys: ${Object.keys(body ?? {}).join(', ')})`);
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
  const choices = choicesByIndex<ChatChoice>(body, 1, n);
  const msg = choices[0]!.message ?? {};
  const answer: Answer = {
    text: typeof msg.content === 'string' ? msg.content : null,
    reasoning: msg.reasoning ?? msg.reasoning_content ?? null,
    finishReason: choices[0]!.finish_reason ?? null,
  };
  if (n > 1) answer.texts = choices.map((c) => c.message?.content ?? '');
  return answer;
}

/** Splits a list-prompt response back into one answer per prompt, matched by `index` = prompt·n + j. */
export function readCompletions(body: unknown, promptCount: number, n: number): Answer[] {
  const choices = choicesByIndex<CompletionChoice>(body, promptCount, n);
  const answers: Answer[] = new Array(promptCount);
  for (let p = 0; p < promptCount; p++) {
    const first = choices[p * n]!;
    if (typeof first.text !== 'string') throw new RequestFailure('protocol', `choice ${p * n} has no text`);
    const answer: Answer = { text: first.text, reasoning: null, finishReason: first.finish_reason ?? null };
    if (n > 1) answer.texts = choices.slice(p * n, p * n + n).map((c) => (typeof c.text === 'string' ? c.text : ''));
    answers[p] = answer;
  }
  return answers;
}

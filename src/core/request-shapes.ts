import type { GenerationOptions } from './options.ts';

/** What one choice (or one prompt's choices) came to. */
export interface Answer {
  text: string | null;
  reasoning: string | null;
  finishReason: string | null;
  texts?: string[];
}

/** The sampling fields both request shapes share; extras first so ours win. */
function sampling(gen: GenerationOptions, model: string, maxTokens: number): Record<string, unknown> {
  const body: Record<string, unknown> = { ...gen.extra, model, max_tokens: maxTokens };
  if (gen.temperature !== undefined) body.temperature = gen.temperature;
  if (gen.topP !== undefined) body.top_p = gen.topP;
  if (gen.seed !== undefined) body.seed = gen.seed;
  if (gen.stop?.length) body.stop = gen.stop;
  if (gen.n !== undefined && gen.n !== 1) body.n = gen.n;
  return body;
}

/** Individual mode: `POST /v1/chat/completions`, the server applies the chat template. */
export function chatBody(prompt: string, gen: GenerationOptions, model: string, maxTokens: number): Record<string, unknown> {
  const messages = gen.system ? [{ role: 'system', content: gen.system }] : [];
  messages.push({ role: 'user', content: prompt });
  return { ...sampling(gen, model, maxTokens), messages };
}

/**
 * Batch mode: one `POST /v1/completions` with the list. Raw completions have no system role,
 * so a system prompt is prepended to every prompt.
 */
export function completionsBody(prompts: string[], gen: GenerationOptions, model: string, maxTokens: number): Record<string, unknown> {
  const prompt = gen.system ? prompts.map((p) => `${gen.system}\n\n${p}`) : prompts;
  return { ...sampling(gen, model, maxTokens), prompt };
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export function readUsage(body: unknown): Usage | null {
  const u = (body as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } })?.usage;
  if (typeof u?.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return null;
  return { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens };
}

interface ChatChoice {
  index?: number;
  finish_reason?: string | null;
  message?: { content?: string | null; reasoning?: string | null; reasoning_content?: string | null };
}

/** Reads `content`, keeping `reasoning` (vLLM ≥0.17) or `reasoning_content` (older) apart. */
export function readChat(body: unknown): Answer {
  const choices = sortByIndex((body as { choices?: ChatChoice[] })?.choices);
  if (!choices.length) throw new Error(`response has no choices (keys: ${Object.keys(body ?? {}).join(', ')})`);
  const first = choices[0]!;
  const msg = first.message ?? {};
  const answer: Answer = {
    text: typeof msg.content === 'string' ? msg.content : null,
    reasoning: msg.reasoning ?? msg.reasoning_content ?? null,
    finishReason: first.finish_reason ?? null,
  };
  if (choices.length > 1) answer.texts = choices.map((c) => c.message?.content ?? '');
  return answer;
}

interface CompletionChoice {
  index?: number;
  text?: string;
  finish_reason?: string | null;
}

/**
 * Splits a list-prompt response back into one answer per prompt, matched by `index`
 * (= prompt·n + j), never by arrival order. A prompt without its choice gets an Error.
 */
export function readCompletions(body: unknown, promptCount: number, n: number): Array<Answer | Error> {
  const byIndex = new Map<number, CompletionChoice>();
  for (const c of (body as { choices?: CompletionChoice[] })?.choices ?? []) {
    if (typeof c.index === 'number') byIndex.set(c.index, c);
  }
  const expected = promptCount * n;
  const countNote = byIndex.size === expected ? '' : ` (server returned ${byIndex.size} choices for ${expected})`;
  return Array.from({ length: promptCount }, (_, p) => {
    const own = Array.from({ length: n }, (_, j) => byIndex.get(p * n + j));
    const first = own[0];
    if (!first || typeof first.text !== 'string') return new Error(`no choice with index ${p * n} in the response${countNote}`);
    const answer: Answer = { text: first.text, reasoning: null, finishReason: first.finish_reason ?? null };
    if (n > 1) answer.texts = own.map((c) => c?.text ?? '');
    return answer;
  });
}

function sortByIndex<T extends { index?: number }>(choices: T[] | undefined): T[] {
  return [...(choices ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
}

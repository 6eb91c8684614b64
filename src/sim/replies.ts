import type { SimOptions } from './options.ts';
import { hashString, mulberry32 } from './random.ts';

export type FinishReason = 'stop' | 'length';

/** One generated choice, as output tokens (each a word with its leading whitespace). */
export interface Output {
  /** Thinking tokens, for reasoning-mode chat; null otherwise. */
  reasoning: string[] | null;
  /** Answer tokens; null when a reasoning model ran out of budget while thinking. */
  content: string[] | null;
  finishReason: FinishReason;
}

/** Every reasoning-mode answer thinks exactly this many tokens first. */
export const REASONING_TOKENS = 32;

const REASONING = cycleWords('Let me think about this step by step before I answer.', REASONING_TOKENS);
const LOREM = (
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et ' +
  'dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea ' +
  'commodo consequat duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat ' +
  'nulla pariatur excepteur sint occaecat cupidatat non proident sunt in culpa qui officia deserunt mollit anim id est laborum'
).split(' ');

/** Prompt tokens by the chars/4 heuristic clients use too, so both sides agree on context limits. */
export function countTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

export function outputTokens(output: Output): number {
  return (output.reasoning?.length ?? 0) + (output.content?.length ?? 0);
}

/** Choice `j` for `prompt` within `maxTokens` output tokens, thinking first when `reasons`. */
export function generate(prompt: string, j: number, maxTokens: number, options: SimOptions, reasons: boolean): Output {
  if (!reasons) return answer(prompt, j, maxTokens, options);
  if (maxTokens <= REASONING_TOKENS) return { reasoning: REASONING.slice(0, maxTokens), content: null, finishReason: 'length' };
  return { ...answer(prompt, j, maxTokens - REASONING_TOKENS, options), reasoning: REASONING };
}

function answer(prompt: string, j: number, maxTokens: number, options: SimOptions): Output {
  if (options.reply === 'echo') {
    // Echo names its prompt, so a caller can check which prompt each text answers.
    const tokens = splitTokens(`completion: ${prompt}`);
    const finishReason = tokens.length > maxTokens ? 'length' : 'stop';
    return { reasoning: null, content: tokens.slice(0, maxTokens), finishReason };
  }
  const random = mulberry32(options.seed + hashString(prompt) + Math.imul(j, 0x9e3779b9));
  const min = Math.ceil(maxTokens / 2);
  const count = min + Math.floor(random() * (maxTokens - min + 1));
  const words = Array.from({ length: count }, (_, i) => (i ? ' ' : '') + LOREM[Math.floor(random() * LOREM.length)]!);
  return { reasoning: null, content: words, finishReason: count === maxTokens ? 'length' : 'stop' };
}

/** Words with their leading whitespace, so the tokens concatenate back to the (trimmed) text. */
function splitTokens(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

function cycleWords(sentence: string, count: number): string[] {
  const words = sentence.split(' ');
  return Array.from({ length: count }, (_, i) => (i ? ' ' : '') + words[i % words.length]);
}

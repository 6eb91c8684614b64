import { randomInt } from 'node:crypto';
import type { SimOptions } from './options.ts';
import { hashString, mulberry32 } from './random.ts';

export type FinishReason = 'stop' | 'length';

/** One generated choice, as output tokens (each a word with its leading whitespace). */
export interface Output {
  /** Thinking tokens, for reasoning-mode chat; null otherwise. */
  reasoning: string[] | null;
  /** Answer tokens; null when a reasoning model ran out of budget (or hit a stop string) while thinking. */
  content: string[] | null;
  finishReason: FinishReason;
  /** The stop string that ended the output, as vLLM reports it; null for EOS and length. */
  stopReason: string | null;
}

/** The sampling fields the simulator honours. */
export interface Sampling {
  maxTokens: number;
  /** Stop strings; the output ends before the first one that appears. */
  stop: readonly string[];
  /** Keep generating past end-of-sequence: exactly maxTokens tokens (vLLM's benchmarks rely on it). */
  ignoreEos: boolean;
  temperature: number | undefined;
  seed: number | undefined;
}

/** Every reasoning-mode answer thinks exactly this many tokens first. */
export const REASONING_TOKENS = 32;

const REASONING = cycleWords('Let me think about this step by step before I answer.'.split(' '), REASONING_TOKENS);
const LOREM = (
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et ' +
  'dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea ' +
  'commodo consequat duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat ' +
  'nulla pariatur excepteur sint occaecat cupidatat non proident sunt in culpa qui officia deserunt mollit anim id est laborum'
).split(' ');
const SPACED_LOREM = LOREM.map((w) => ` ${w}`);

export function outputTokens(output: Output): number {
  return (output.reasoning?.length ?? 0) + (output.content?.length ?? 0);
}

/** Output token `k` as streamed: its text, whether it is thinking, whether it ends the output. An empty output streams one empty piece. */
/** Output tokens `from`…`to` (inclusive) of one kind: a streamed delta never mixes thinking with the answer. */
export function tokensBetween(output: Output, from: number, to: number): { texts: string[]; text: string; reasoning: boolean; last: boolean } {
  const end = tokenAt(output, to);
  // One token a delta (the default): no array joined for it, 80,000 times a 10,000-prompt batch.
  if (from === to) return { texts: [end.text], text: end.text, reasoning: end.reasoning, last: end.last };
  const texts: string[] = [];
  for (let k = from; k <= to; k++) texts.push(tokenAt(output, k).text);
  return { texts, text: texts.join(''), reasoning: end.reasoning, last: end.last };
}

export function tokenAt(output: Output, k: number): { text: string; reasoning: boolean; last: boolean } {
  const thinking = output.reasoning?.length ?? 0;
  const last = k >= outputTokens(output) - 1;
  if (k < thinking) return { text: output.reasoning![k]!, reasoning: true, last };
  return { text: output.content?.[k - thinking] ?? '', reasoning: false, last };
}

/** Choice `j` for `prompt`, thinking first when `reasons`, cut at the first stop string. */
export function generate(prompt: string, j: number, sampling: Sampling, options: SimOptions, reasons: boolean): Output {
  const { maxTokens } = sampling;
  let output: Output;
  if (!reasons) output = answer(prompt, j, sampling, options);
  else if (maxTokens <= REASONING_TOKENS) output = { reasoning: REASONING.slice(0, maxTokens), content: null, finishReason: 'length', stopReason: null };
  else output = { ...answer(prompt, j, { ...sampling, maxTokens: maxTokens - REASONING_TOKENS }, options), reasoning: REASONING };
  return applyStop(output, sampling.stop);
}

function answer(prompt: string, j: number, sampling: Sampling, options: SimOptions): Output {
  const { maxTokens, ignoreEos } = sampling;
  if (options.reply === 'echo') {
    // Echo names its prompt, so a caller can check which prompt each text answers; past EOS it repeats itself.
    const tokens = splitTokens(`completion: ${prompt}`);
    if (ignoreEos) return { reasoning: null, content: cycleWords(tokens.map((t) => t.trim()), maxTokens), finishReason: 'length', stopReason: null };
    const finishReason = tokens.length > maxTokens ? 'length' : 'stop';
    return { reasoning: null, content: tokens.slice(0, maxTokens), finishReason, stopReason: null };
  }
  const random = mulberry32(choiceSeed(prompt, j, sampling, options));
  const count = ignoreEos ? maxTokens : Math.min(maxTokens, naturalLength(random, options.answerTokens));
  // A plain loop over prebuilt tokens: a thousand endpoints' lists are millions of tokens per simulator process.
  const words = new Array<string>(count);
  for (let i = 0; i < count; i++) words[i] = (i ? SPACED_LOREM : LOREM)[Math.floor(random() * LOREM.length)]!;
  return { reasoning: null, content: words, finishReason: count === maxTokens ? 'length' : 'stop', stopReason: null };
}

/**
 * The randomness choice `j` draws, as vLLM samples: greedy decoding (temperature 0) gives every
 * choice on every endpoint the same answer; a request `seed` repeats on every endpoint; sampling
 * without one differs per request and endpoint. A request without temperature keeps the
 * simulator's seeded answers, the same on every endpoint, as before.
 */
function choiceSeed(prompt: string, j: number, { temperature, seed }: Sampling, options: SimOptions): number {
  const perChoice = Math.imul(j, 0x9e3779b9);
  if (temperature === 0) return options.seed + hashString(prompt);
  if (seed !== undefined) return Math.imul(seed | 0, 0x85ebca6b) + Math.floor(seed / 2 ** 32) + hashString(prompt) + perChoice;
  if (temperature !== undefined) return randomInt(2 ** 32 - 1);
  return options.seed + hashString(prompt) + perChoice;
}

/** Where the answer reaches end-of-sequence: lognormal around `median` tokens (a model stops when it is done, whatever the budget). */
function naturalLength(random: () => number, median: number): number {
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Math.max(1, Math.round(median * Math.exp(0.5 * normal)));
}

/**
 * vLLM checks stop strings after each token over the whole output text: the first token that completes one
 * ends the output (it still counts as generated), and the text is cut before the match. Ties go to the
 * earlier stop string in the list.
 */
function applyStop(output: Output, stop: readonly string[]): Output {
  if (stop.length === 0) return output;
  const tokens = [...(output.reasoning ?? []), ...(output.content ?? [])];
  const ends: number[] = [];
  let length = 0;
  for (const t of tokens) ends.push((length += t.length));
  const text = tokens.join('');
  let hit: { token: number; at: number; stop: string } | undefined;
  for (const s of stop) {
    const at = text.indexOf(s);
    if (at < 0) continue;
    const token = ends.findIndex((end) => end >= at + s.length);
    if (!hit || token < hit.token) hit = { token, at, stop: s };
  }
  if (!hit) return output;
  const kept = tokens.slice(0, hit.token + 1).map((t, i) => {
    const start = ends[i]! - t.length;
    return t.slice(0, Math.max(0, hit.at - start));
  });
  const thinking = output.reasoning?.length ?? 0;
  return {
    reasoning: output.reasoning && kept.slice(0, thinking),
    content: kept.length > thinking ? kept.slice(thinking) : output.reasoning ? null : [],
    finishReason: 'stop',
    stopReason: hit.stop,
  };
}

/** Words with their leading whitespace, so the tokens concatenate back to the (trimmed) text. */
function splitTokens(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

function cycleWords(words: readonly string[], count: number): string[] {
  return Array.from({ length: count }, (_, i) => (i ? ' ' : '') + words[i % words.length]);
}

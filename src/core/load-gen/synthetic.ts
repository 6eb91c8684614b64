import type { LoadRequest } from '../patterns/sustained-load.ts';
import type { PromptInput } from '../run/result.ts';

/**
 * Prompts of a chosen length, as `vllm bench serve --dataset-name random` makes them: lengths drawn
 * uniformly from [len × (1 − r), len × (1 + r)] (`--random-range-ratio`), the output held to its drawn
 * length by max_tokens with ignore_eos. Words are random four-letter ones, a token each in common BPE
 * vocabularies and in the simulator's tokenizer, so no two prompts share a prefix worth caching.
 */
export interface LengthSpec {
  /** Mean tokens. */
  len: number;
  /** Half-width of the uniform range as a share of len, 0 ≤ r < 1. */
  rangeRatio: number;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

export function drawLength(spec: LengthSpec, random: () => number): number {
  const lo = Math.max(1, Math.floor(spec.len * (1 - spec.rangeRatio)));
  const hi = Math.max(lo, Math.ceil(spec.len * (1 + spec.rangeRatio)));
  return lo + Math.floor(random() * (hi - lo + 1));
}

/** A prompt of about `tokens` tokens. */
export function syntheticPrompt(tokens: number, random: () => number): string {
  const words: string[] = new Array(tokens);
  for (let i = 0; i < tokens; i++) {
    let w = '';
    for (let k = 0; k < 4; k++) w += LETTERS[Math.floor(random() * 26)];
    words[i] = w;
  }
  return words.join(' ');
}

/**
 * A load run's requests: each prompt drawn at random from `prompts`, or made to a drawn `inputLen`; each answer
 * held to a drawn `outputLen` when one is given.
 */
export function loadRequests(source: { prompts: readonly PromptInput[] } | { inputLen: number }, outputLen: number | undefined, rangeRatio: number, random: () => number): () => LoadRequest {
  const prompt = (): PromptInput =>
    'prompts' in source ? source.prompts[Math.floor(random() * source.prompts.length)]! : { prompt: syntheticPrompt(drawLength({ len: source.inputLen, rangeRatio }, random), random) };
  return () => ({ prompt: prompt(), ...(outputLen ? { outputTokens: drawLength({ len: outputLen, rangeRatio }, random) } : {}) });
}

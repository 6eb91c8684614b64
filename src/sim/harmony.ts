import type { Output } from './replies.ts';

const ANALYSIS = '<|channel|>analysis<|message|>';
const FINAL = '<|end|><|start|>assistant<|channel|>final<|message|>';

/**
 * An output as gpt-oss writes it after a rendered `<|start|>assistant`: its thinking in the analysis
 * channel, then the answer in the final channel (the closing `<|return|>` is the stop token, never
 * in the text). Cut off while thinking, there is no final channel. The framing rides on the first
 * token of each channel, so token counts stay those of the thinking and the answer.
 */
export function harmonyOutput(output: Output): Output {
  const tokens = (output.reasoning ?? []).map((t, i) => (i === 0 ? ANALYSIS + t : t));
  // A loop, not a spread: an answer may hold more tokens than a call takes arguments.
  if (output.content) (output.content.length ? output.content : ['']).forEach((t, i) => tokens.push(i === 0 ? FINAL + t : t));
  return { reasoning: null, content: tokens, finishReason: output.finishReason, stopReason: output.stopReason };
}

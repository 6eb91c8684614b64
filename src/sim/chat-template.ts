import { badRequest } from './errors.ts';
import type { Prompt } from './generation.ts';
import { countTokens } from './tokenizer.ts';
import type { Body } from './validation.ts';

/** How each simulated chat template frames a turn. */
const FORMATS = {
  /** ChatML, as Qwen's: `<|im_start|>{role}\n{content}<|im_end|>\n`. */
  chatml: { open: (role: string) => `<|im_start|>${role}\n`, close: '<|im_end|>\n', user: /<\|im_start\|>user\n([^]*?)<\|im_end\|>/g, trims: false },
  /** OpenAI's harmony (gpt-oss), without its system preamble: `<|start|>{role}<|message|>{content}<|end|>`. */
  harmony: { open: (role: string) => `<|start|>${role}<|message|>`, close: '<|end|>', user: /<\|start\|>user<\|message\|>([^]*?)<\|end\|>/g, trims: false },
  /** Llama 3's, which strips each message's content (`message['content'] | trim`). */
  llama3: { open: (role: string) => `<|start_header_id|>${role}<|end_header_id|>\n\n`, close: '<|eot_id|>', user: /<\|start_header_id\|>user<\|end_header_id\|>\n\n([^]*?)<\|eot_id\|>/g, trims: true },
} as const;

export type ChatFormat = keyof typeof FORMATS;

export interface Message {
  role: string;
  content: string;
}

/** How vLLM renders a conversation before tokenizing it (its chat request fields of the same names). */
export interface RenderOptions {
  addGenerationPrompt: boolean;
  /** The last message stays open so the model continues it. */
  continueFinalMessage: boolean;
  format: ChatFormat;
}

/** The simulated model's chat template: each message framed as its format says; the generation prompt opens the assistant turn. */
export function renderChat(messages: readonly Message[], { addGenerationPrompt, continueFinalMessage, format }: RenderOptions): string {
  if (addGenerationPrompt && continueFinalMessage) {
    throw badRequest('Cannot set both `continue_final_message` and `add_generation_prompt` to True.');
  }
  const { open, close, trims } = FORMATS[format];
  const turns = messages.map((m, i) => {
    // Python's str.strip(), as jinja's trim filter does it in vLLM.
    const opened = open(m.role) + (trims ? m.content.replace(/^[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g, '') : m.content);
    return continueFinalMessage && i === messages.length - 1 ? opened : opened + close;
  });
  return turns.join('') + (addGenerationPrompt ? open('assistant') : '');
}

/** Which format's assistant turn the text opens and awaits, if any. */
export function awaitedFormat(text: string): ChatFormat | null {
  return (Object.keys(FORMATS) as ChatFormat[]).find((f) => text.endsWith(FORMATS[f].open('assistant'))) ?? null;
}

/**
 * A prompt as the simulated model reads it. Its reply answers the last user turn when the text is
 * a rendered conversation awaiting the assistant, so a batch rendered through /tokenize gets the
 * answer chat gives (the simulator's stand-in for the same tokens giving the same output).
 */
export function conversationPrompt(text: string): Prompt {
  const format = awaitedFormat(text);
  const turns = format ? [...text.matchAll(FORMATS[format].user)] : [];
  return { text, question: turns.at(-1)?.[1] ?? (format ? '' : text), tokens: countTokens(text) };
}

/** Messages with their text content; content parts other than text count as empty. */
export function parseMessages(value: unknown): Message[] {
  if (!Array.isArray(value) || value.length === 0) throw badRequest("'messages' must be a non-empty list", 'messages');
  return value.map((m: unknown) => {
    if (typeof m !== 'object' || m === null || typeof (m as Body)['role'] !== 'string') {
      throw badRequest("each message must be an object with a string 'role'", 'messages');
    }
    return { role: (m as Body)['role'] as string, content: textOf((m as Body)['content']) };
  });
}

function textOf(content: unknown): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (part && typeof part === 'object' && typeof part.text === 'string' ? part.text : '')).join('');
  }
  throw badRequest("message 'content' must be a string or a list of content parts", 'messages');
}

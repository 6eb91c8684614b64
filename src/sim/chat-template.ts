import { badRequest } from './errors.ts';
import type { Prompt } from './generation.ts';
import { countTokens } from './tokenizer.ts';
import type { Body } from './validation.ts';

const ASSISTANT_TURN = '<|im_start|>assistant\n';

export interface Message {
  role: string;
  content: string;
}

/** How vLLM renders a conversation before tokenizing it (its chat request fields of the same names). */
export interface RenderOptions {
  addGenerationPrompt: boolean;
  /** The last message stays open so the model continues it. */
  continueFinalMessage: boolean;
}

/**
 * The simulated model's chat template, ChatML as Qwen's: each message is
 * `<|im_start|>{role}\n{content}<|im_end|>\n`, and the generation prompt opens the assistant turn.
 */
export function renderChat(messages: readonly Message[], { addGenerationPrompt, continueFinalMessage }: RenderOptions): string {
  if (addGenerationPrompt && continueFinalMessage) {
    throw badRequest('Cannot set both `continue_final_message` and `add_generation_prompt` to True.');
  }
  const turns = messages.map((m, i) => {
    const open = `<|im_start|>${m.role}\n${m.content}`;
    return continueFinalMessage && i === messages.length - 1 ? open : `${open}<|im_end|>\n`;
  });
  return turns.join('') + (addGenerationPrompt ? ASSISTANT_TURN : '');
}

/**
 * A prompt as the simulated model reads it. Its reply answers the last user turn when the text is
 * a rendered conversation awaiting the assistant, so a batch rendered through /tokenize gets the
 * answer chat gives (the simulator's stand-in for the same tokens giving the same output).
 */
export function conversationPrompt(text: string): Prompt {
  const awaitsAssistant = text.endsWith(`${ASSISTANT_TURN}`);
  const turns = awaitsAssistant ? [...text.matchAll(/<\|im_start\|>user\n([^]*?)<\|im_end\|>/g)] : [];
  return { text, question: turns.at(-1)?.[1] ?? (awaitsAssistant ? '' : text), tokens: countTokens(text) };
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

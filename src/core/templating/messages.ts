/** One chat message, as both chat completions and `/tokenize` take it. */
export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/**
 * Extra variables of the chat template (`chat_template_kwargs`, e.g. `enable_thinking`,
 * `reasoning_effort`): the chat endpoint applies them, so a rendered batch must too.
 */
export type TemplateKwargs = Record<string, unknown> | undefined;

/** The run's `chat_template_kwargs` request field, when it is an object. */
export function templateKwargs(extra: Record<string, unknown> | undefined): TemplateKwargs {
  const kwargs = extra?.['chat_template_kwargs'];
  return kwargs && typeof kwargs === 'object' && !Array.isArray(kwargs) ? (kwargs as Record<string, unknown>) : undefined;
}

/** A prompt as a conversation: the system prompt (if any) first, then the user's turn. */
export function chatMessages(prompt: string, system: string | undefined): ChatMessage[] {
  const messages: ChatMessage[] = system ? [{ role: 'system', content: system }] : [];
  messages.push({ role: 'user', content: prompt });
  return messages;
}

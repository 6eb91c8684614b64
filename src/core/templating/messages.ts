/** One chat message, as both chat completions and `/tokenize` take it. */
export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/** A prompt as a conversation: the system prompt (if any) first, then the user's turn. */
export function chatMessages(prompt: string, system: string | undefined): ChatMessage[] {
  const messages: ChatMessage[] = system ? [{ role: 'system', content: system }] : [];
  messages.push({ role: 'user', content: prompt });
  return messages;
}

import { badRequest } from './errors.ts';
import type { GenerationApi } from './generation.ts';
import type { SimOptions } from './options.ts';
import { countTokens, type Output } from './replies.ts';
import { includeUsage, optionalBool, optionalInt, requestedModel, type Body } from './validation.ts';

/** `POST /v1/chat/completions`: the reply answers the last user message; reasoning models think first. */
export function chatApi(options: SimOptions): GenerationApi {
  const field = options.reasoning;
  // The message field the configured vLLM version puts thinking in, if any.
  const reasoningOf = (output: Output): object => (field === 'none' ? {} : { [field]: output.reasoning?.join('') ?? null });
  return {
    idPrefix: 'chatcmpl',
    object: 'chat.completion',
    chunkObject: 'chat.completion.chunk',
    reasons: field !== 'none',
    parse(body) {
      const messages = parseMessages(body['messages']);
      const lastUser = messages.findLast((m) => m.role === 'user');
      const stream = optionalBool(body, 'stream');
      return {
        model: requestedModel(body),
        // The rendered prompt spans all messages; the reply echoes the last user turn.
        prompts: [{ text: lastUser?.content ?? '', tokens: countTokens(messages.map((m) => m.content).join('')) }],
        n: optionalInt(body, 'n', 1) ?? 1,
        maxTokens: optionalInt(body, 'max_completion_tokens', 1) ?? optionalInt(body, 'max_tokens', 1),
        echo: false,
        stream,
        includeUsage: includeUsage(body, stream),
      };
    },
    choice(output, index) {
      const message = { role: 'assistant', content: output.content?.join('') ?? null, ...reasoningOf(output) };
      return { index, message, logprobs: null, finish_reason: output.finishReason, stop_reason: null };
    },
    streamChoices(output, index) {
      const deltas: object[] = [
        { role: 'assistant', content: '' },
        ...(output.reasoning ?? []).map((text) => ({ [field]: text })),
        ...(output.content ?? []).map((content) => ({ content })),
      ];
      return deltas.map((delta, i) => ({
        index,
        delta,
        logprobs: null,
        finish_reason: i === deltas.length - 1 ? output.finishReason : null,
      }));
    },
  };
}

interface Message {
  role: string;
  content: string;
}

/** Messages with their text content; content parts other than text count as empty. */
function parseMessages(value: unknown): Message[] {
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

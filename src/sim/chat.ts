import { conversationPrompt, parseMessages, renderChat, type RenderOptions } from './chat-template.ts';
import { outputTokenIds, promptTokenIds, type GenerationApi } from './generation.ts';
import { chatLogprobs, chatLogprobsField } from './logprobs.ts';
import type { SimOptions } from './options.ts';
import { badRequest } from './errors.ts';
import { tokensBetween } from './replies.ts';
import { optionalBool, optionalInt, requestedModel, samplingFields, streamUsage, type Body } from './validation.ts';

/** `POST /v1/chat/completions`: the reply answers the last user message; reasoning models think first. */
export function chatApi(options: SimOptions): GenerationApi {
  const byMode: Record<SimOptions['reasoning'], string[]> = {
    none: [],
    auto: ['reasoning'], // resolveSimOptions has already replaced it with the version's field(s)
    reasoning: ['reasoning'],
    reasoning_content: ['reasoning_content'],
    both: ['reasoning', 'reasoning_content'],
  };
  const fields = byMode[options.reasoning];
  // The message (or delta) fields the configured vLLM version puts thinking in, if any.
  const thinking = (text: string | null): object => Object.fromEntries(fields.map((f) => [f, text]));
  return {
    idPrefix: 'chatcmpl',
    object: 'chat.completion',
    chunkObject: 'chat.completion.chunk',
    reasons: fields.length > 0,
    parse(body) {
      const messages = parseMessages(body['messages']);
      const stream = optionalBool(body, 'stream');
      return {
        model: requestedModel(body),
        prompts: [conversationPrompt(renderChat(messages, renderOptions(body, options)))],
        n: optionalInt(body, 'n', 1) ?? 1,
        maxTokens: optionalInt(body, 'max_completion_tokens', 1) ?? optionalInt(body, 'max_tokens', 1),
        ...samplingFields(body),
        logprobs: chatLogprobsField(body),
        echo: false,
        stream,
        ...streamUsage(body, stream),
        returnTokenIds: options.returnTokenIds && optionalBool(body, 'return_token_ids'),
      };
    },
    choice(output, index, _prompt, request) {
      // vLLM's ChatMessage defaults tool_calls to an empty list.
      const message = { role: 'assistant', content: output.content?.join('') ?? null, tool_calls: [], ...thinking(output.reasoning?.join('') ?? null) };
      // Logprobs cover the answer's tokens; thinking tokens come before them.
      const thought = output.reasoning?.length ?? 0;
      const logprobs = request.logprobs === undefined ? null : chatLogprobs(output.content ?? [], request.logprobs, thought);
      const ids = request.returnTokenIds ? { token_ids: outputTokenIds([...(output.reasoning ?? []), ...(output.content ?? [])]) } : {};
      return { index, message, logprobs, finish_reason: output.finishReason, stop_reason: output.stopReason, ...ids };
    },
    // Chat puts the (one) prompt's ids on the response, not on each choice.
    responseFields: (request) => (request.returnTokenIds ? { prompt_token_ids: promptTokenIds(request.prompts[0]!) } : {}),
    // vLLM opens every choice with the role once the request's first token is out.
    openingChoices: (request) =>
      Array.from({ length: request.n }, (_, index) => ({ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null })),
    streamChoice(output, from, to, index, _prompt, request) {
      const tokens = tokensBetween(output, from, to);
      const { text } = tokens;
      const logprobs = request.logprobs === undefined || tokens.reasoning ? null : chatLogprobs(tokens.texts, request.logprobs, from);
      const delta = tokens.reasoning ? thinking(text) : { content: text };
      // Only the finishing chunk has stop_reason (vLLM serializes chat chunks with exclude_unset).
      const finish = tokens.last ? { finish_reason: output.finishReason, stop_reason: output.stopReason } : { finish_reason: null };
      return { index, delta, logprobs, ...finish };
    },
  };
}

/**
 * `POST /v1/chat/completions/batch` (vLLM ≥ 0.19, PR #38011): `messages` is a list of conversations,
 * answered as one chat completion whose choice i answers conversation i.
 */
export function chatBatchApi(options: SimOptions): GenerationApi {
  const chat = chatApi(options);
  return {
    ...chat,
    parse(body) {
      const requests = batchConversations(body).map((conversation) => chat.parse(conversation));
      return { ...requests[0]!, prompts: requests.map((r) => r.prompts[0]!) };
    },
    // The one-prompt chat response's prompt_token_ids has no meaning for a list.
    responseFields: undefined,
  };
}

/** A batch chat request as one chat request per conversation; what the batch endpoint refuses is a 400, as in vLLM. */
export function batchConversations(body: Body): Body[] {
  const list = body['messages'];
  if (!Array.isArray(list) || list.length === 0 || !list.every(Array.isArray)) {
    throw badRequest("'messages' must be a non-empty list of conversations, each a list of messages", 'messages');
  }
  if (optionalBool(body, 'stream')) throw badRequest('Streaming is not supported for batch chat completions.', 'stream');
  if ((optionalInt(body, 'n', 1) ?? 1) !== 1) throw badRequest('n > 1 is not supported for batch chat completions.', 'n');
  if (body['tools'] !== undefined && body['tools'] !== null) throw badRequest('Tools are not supported for batch chat completions.', 'tools');
  return list.map((messages: unknown) => ({ ...body, messages }));
}

/** `add_generation_prompt` (default true) and `continue_final_message`, shared by chat and /tokenize. */
export function renderOptions(body: Body, options: SimOptions): RenderOptions {
  return {
    addGenerationPrompt: optionalBool(body, 'add_generation_prompt', true),
    continueFinalMessage: optionalBool(body, 'continue_final_message'),
    format: options.chatTemplate,
  };
}

import { conversationPrompt, parseMessages, renderChat, type RenderOptions } from './chat-template.ts';
import { outputTokenIds, promptTokenIds, type GenerationApi } from './generation.ts';
import { chatLogprobs, chatLogprobsField } from './logprobs.ts';
import type { SimOptions } from './options.ts';
import { tokenAt } from './replies.ts';
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
        returnTokenIds: optionalBool(body, 'return_token_ids'),
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
    streamChoice(output, k, index, _prompt, request) {
      const token = tokenAt(output, k);
      const logprobs = request.logprobs === undefined || token.reasoning ? null : chatLogprobs([token.text], request.logprobs, k);
      const delta = token.reasoning ? thinking(token.text) : { content: token.text };
      // Only the finishing chunk has stop_reason (vLLM serializes chat chunks with exclude_unset).
      const finish = token.last ? { finish_reason: output.finishReason, stop_reason: output.stopReason } : { finish_reason: null };
      return { index, delta, logprobs, ...finish };
    },
  };
}

/** `add_generation_prompt` (default true) and `continue_final_message`, shared by chat and /tokenize. */
export function renderOptions(body: Body, options: SimOptions): RenderOptions {
  return {
    addGenerationPrompt: optionalBool(body, 'add_generation_prompt', true),
    continueFinalMessage: optionalBool(body, 'continue_final_message'),
    format: options.chatTemplate,
  };
}

import { badRequest } from './errors.ts';
import type { GenerationApi } from './generation.ts';
import type { SimOptions } from './options.ts';
import { countTokens, tokenAt } from './replies.ts';
import { optionalBool, optionalInt, requestedModel, stopStrings, streamUsage } from './validation.ts';

/** `POST /v1/completions`: a prompt or a list of prompts, answered as `text_completion`. */
export function completionsApi(options: SimOptions): GenerationApi {
  return {
    idPrefix: 'cmpl',
    object: 'text_completion',
    chunkObject: 'text_completion',
    reasons: false,
    parse(body) {
      const prompts = parsePrompts(body['prompt'], options.maxPrompts).map((text) => ({ text, tokens: countTokens(text) }));
      const echo = optionalBool(body, 'echo');
      const stream = optionalBool(body, 'stream');
      return {
        model: requestedModel(body),
        prompts,
        n: optionalInt(body, 'n', 1) ?? 1,
        // vLLM allows 0 only to echo the prompt back.
        maxTokens: optionalInt(body, 'max_tokens', echo ? 0 : 1) ?? 16,
        stop: stopStrings(body),
        ignoreEos: optionalBool(body, 'ignore_eos'),
        echo,
        stream,
        ...streamUsage(body, stream),
      };
    },
    choice(output, index, prompt, request) {
      const text = (request.echo ? prompt.text : '') + (output.content?.join('') ?? '');
      return { index, text, logprobs: null, finish_reason: output.finishReason, stop_reason: output.stopReason };
    },
    openingChoices: () => [],
    streamChoice(output, k, index, prompt, request) {
      // vLLM echoes the prompt in front of the first delta.
      const token = tokenAt(output, k);
      const text = (request.echo && k === 0 ? prompt.text : '') + token.text;
      const { last } = token;
      return { index, text, logprobs: null, finish_reason: last ? output.finishReason : null, stop_reason: last ? output.stopReason : null };
    },
  };
}

function parsePrompts(prompt: unknown, maxPrompts: number): string[] {
  if (typeof prompt === 'string') return [prompt];
  if (!Array.isArray(prompt) || prompt.length === 0) {
    throw badRequest('Either prompt or prompt_embeds must be provided and non-empty.', 'prompt');
  }
  if (!prompt.every((p) => typeof p === 'string')) {
    throw badRequest('The simulator accepts text prompts only (a string or a list of strings), not token ids.', 'prompt');
  }
  if (prompt.length > maxPrompts) {
    throw badRequest(
      `prompt list length ${prompt.length} exceeds the maximum allowed count of ${maxPrompts}. ` +
        'To increase this limit, set the VLLM_MAX_COMPLETION_PROMPTS environment variable.',
      'prompt',
    );
  }
  return prompt;
}

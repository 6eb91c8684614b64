import { badRequest } from './errors.ts';
import type { GenerationApi, GenerationRequest, Prompt } from './generation.ts';
import type { SimOptions } from './options.ts';
import { countTokens, type Output } from './replies.ts';
import { includeUsage, optionalBool, optionalInt, requestedModel } from './validation.ts';

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
        echo,
        stream,
        includeUsage: includeUsage(body, stream),
      };
    },
    choice(output, index, prompt, request) {
      return { index, text: texts(output, prompt, request).join(''), logprobs: null, finish_reason: output.finishReason, stop_reason: null };
    },
    streamChoices(output, index, prompt, request) {
      const pieces = texts(output, prompt, request);
      return pieces.map((text, i) => ({
        index,
        text,
        logprobs: null,
        finish_reason: i === pieces.length - 1 ? output.finishReason : null,
        stop_reason: null,
      }));
    },
  };
}

/** The output tokens as text pieces, with the prompt in front when echoing; never empty. */
function texts(output: Output, prompt: Prompt, request: GenerationRequest): string[] {
  const pieces = [...(output.content ?? [])];
  if (request.echo) pieces.unshift(prompt.text);
  return pieces.length ? pieces : [''];
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

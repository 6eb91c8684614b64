import { badRequest } from './errors.ts';
import { outputTokenIds, promptTokenIds, type GenerationApi, type GenerationRequest, type Prompt } from './generation.ts';
import { completionLogprobs, completionLogprobsField } from './logprobs.ts';
import type { SimOptions } from './options.ts';
import { tokensBetween } from './replies.ts';
import { awaitedFormat, conversationPrompt } from './chat-template.ts';
import { checkTokenIds, decode, withoutSpecials } from './tokenizer.ts';
import { optionalBool, optionalInt, requestedModel, samplingFields, streamUsage } from './validation.ts';

/** `POST /v1/completions`: a prompt or a list of prompts, answered as `text_completion`. */
export function completionsApi(options: SimOptions): GenerationApi {
  return {
    idPrefix: 'cmpl',
    object: 'text_completion',
    chunkObject: 'text_completion',
    reasons: false,
    parse(body) {
      const prompts = parsePrompts(body['prompt'], options.maxPrompts ?? Infinity);
      const echo = optionalBool(body, 'echo');
      const stream = optionalBool(body, 'stream');
      return {
        model: requestedModel(body),
        prompts,
        n: optionalInt(body, 'n', 1) ?? 1,
        // vLLM allows 0 only to echo the prompt back.
        maxTokens: optionalInt(body, 'max_tokens', echo ? 0 : 1) ?? 16,
        ...samplingFields(body),
        logprobs: completionLogprobsField(body),
        echo,
        stream,
        ...streamUsage(body, stream),
        returnTokenIds: options.returnTokenIds && optionalBool(body, 'return_token_ids'),
        skipSpecialTokens: optionalBool(body, 'skip_special_tokens', true),
      };
    },
    choice(output, index, prompt, request) {
      const echoed = request.echo ? prompt.text : '';
      const text = echoed + visible(output.content?.join('') ?? '', request);
      const logprobs = request.logprobs === undefined ? null : completionLogprobs(output.content ?? [], request.logprobs, 0, echoed.length);
      const ids = request.returnTokenIds ? { token_ids: outputTokenIds([...(output.reasoning ?? []), ...(output.content ?? [])]), prompt_token_ids: promptTokenIds(prompt) } : {};
      return { index, text, logprobs, finish_reason: output.finishReason, stop_reason: output.stopReason, ...ids };
    },
    openingChoices: () => [],
    streamChoice(output, from, to, index, prompt, request) {
      // vLLM echoes the prompt in front of the first delta.
      const tokens = tokensBetween(output, from, to);
      const text = (request.echo && from === 0 ? prompt.text : '') + visible(tokens.text, request);
      const { last } = tokens;
      let logprobs: object | null = null;
      if (request.logprobs !== undefined) {
        const before = (output.content ?? []).slice(0, from).reduce((sum, t) => sum + t.length, request.echo ? prompt.text.length : 0);
        logprobs = completionLogprobs(tokens.texts, request.logprobs, from, before);
      }
      // Streamed, the prompt's ids come with a choice's first chunk and each chunk carries its own tokens'.
      const ids = request.returnTokenIds ? { token_ids: outputTokenIds(tokens.texts), ...(from === 0 ? { prompt_token_ids: promptTokenIds(prompt) } : {}) } : {};
      return { index, text, logprobs, finish_reason: last ? output.finishReason : null, stop_reason: last ? output.stopReason : null, ...ids };
    },
  };
}

/**
 * `prompt` as vLLM takes it: a string, a list of strings, one token-id list or a list of them
 * (token prompts answer as their decoded text). Any empty prompt fails the request.
 */
function parsePrompts(prompt: unknown, maxPrompts: number): Prompt[] {
  return promptList(prompt, maxPrompts, textPrompt, tokenPrompt);
}

/** The shapes `prompt` may take, each prompt made by `fromText` or `fromIds`; every other shape, or too long a list, is vLLM's 400. */
export function promptList<P>(prompt: unknown, maxPrompts: number, fromText: (text: string) => P, fromIds: (ids: number[]) => P): P[] {
  if (typeof prompt === 'string') return [fromText(prompt)];
  if (!Array.isArray(prompt) || prompt.length === 0) {
    throw badRequest('Either prompt or prompt_embeds must be provided and non-empty.', 'prompt');
  }
  if (prompt.every(isTokenId)) return [fromIds(prompt)];
  const batch = prompt.every((p) => typeof p === 'string') || prompt.every((p) => Array.isArray(p) && p.every(isTokenId));
  if (!batch) throw badRequest("'prompt' must be a string, a list of strings, a list of token ids or a list of token-id lists", 'prompt');
  if (prompt.length > maxPrompts) {
    throw badRequest(
      `prompt list length ${prompt.length} exceeds the maximum allowed count of ${maxPrompts}. ` +
        'To increase this limit, set the VLLM_MAX_COMPLETION_PROMPTS environment variable.',
      'prompt',
    );
  }
  return prompt.map((p: string | number[]) => (typeof p === 'string' ? fromText(p) : fromIds(p)));
}

const isTokenId = (v: unknown): v is number => Number.isInteger(v);

/** Output text as the request reads it: special tokens left out unless `skip_special_tokens: false`. */
function visible(text: string, request: GenerationRequest): string {
  return request.skipSpecialTokens === false ? text : withoutSpecials(text);
}

function textPrompt(text: string): Prompt {
  return nonEmpty(rendered(conversationPrompt(text)));
}

function tokenPrompt(ids: number[]): Prompt {
  checkTokenIds(ids);
  return nonEmpty(rendered({ ...conversationPrompt(decode(ids)), tokens: ids.length, ids }));
}

/** A prompt that opens a harmony assistant turn is answered in harmony channels. */
function rendered(prompt: Prompt): Prompt {
  return awaitedFormat(prompt.text) === 'harmony' ? { ...prompt, harmony: true } : prompt;
}

function nonEmpty(prompt: Prompt): Prompt {
  if (prompt.tokens === 0) throw badRequest('The decoder prompt cannot be empty', 'prompt');
  return prompt;
}

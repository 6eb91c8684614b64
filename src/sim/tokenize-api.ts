import { parseMessages, renderChat } from './chat-template.ts';
import { renderOptions } from './chat.ts';
import { badRequest } from './errors.ts';
import type { SimOptions } from './options.ts';
import { decode, encode, tokenStrings } from './tokenizer.ts';
import { checkModel, optionalBool, requestedModel, type Body } from './validation.ts';

/**
 * `POST /tokenize`: a `prompt`, or `messages` rendered with the chat template (vLLM's
 * TokenizeCompletionRequest / TokenizeChatRequest), answered as TokenizeResponse.
 */
export function tokenize(body: Body, options: SimOptions): object {
  checkModel(requestedModel(body), options.model);
  let text: string;
  if (body['messages'] !== undefined) text = renderChat(parseMessages(body['messages']), renderOptions(body, options));
  else if (typeof body['prompt'] === 'string') text = body['prompt'];
  else throw badRequest("'prompt' must be a string, or 'messages' a list of messages", 'prompt');
  const tokens = encode(text);
  const tokenStrs = optionalBool(body, 'return_token_strs') ? tokenStrings(text) : null;
  return { count: tokens.length, max_model_len: options.maxModelLen, tokens, token_strs: tokenStrs };
}

/** `POST /detokenize`: `tokens` back to text, as DetokenizeResponse. */
export function detokenize(body: Body, options: SimOptions): object {
  checkModel(requestedModel(body), options.model);
  const tokens = body['tokens'];
  if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t))) throw badRequest("'tokens' must be a list of integers", 'tokens');
  return { prompt: decode(tokens) };
}

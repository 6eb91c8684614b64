import { randomInt } from 'node:crypto';
import { Template } from '@huggingface/jinja';
import type { LlamaModel, Token } from 'node-llama-cpp';
import { batchConversations, renderOptions } from '../chat.ts';
import { parseMessages } from '../chat-template.ts';
import { promptList } from '../completions.ts';
import { badRequest } from '../errors.ts';
import type { SimOptions } from '../options.ts';
import { optionalBool, optionalInt, requestedModel, samplingFields, streamUsage, type Body, type StreamUsage } from '../validation.ts';

/** A prompt as the model reads it. */
export interface LlamaPrompt {
  tokens: Token[];
  /** What `echo` sends back. */
  text: string;
}

/** A generation request once parsed, completions and chat alike. */
export interface LlamaRequest extends StreamUsage {
  chat: boolean;
  model: string | undefined;
  prompts: LlamaPrompt[];
  n: number;
  /** Undefined = the rest of the context window. */
  maxTokens: number | undefined;
  stop: string[];
  ignoreEos: boolean;
  temperature: number;
  /** One seed per choice of a prompt: the request's seed + j, or random per choice. */
  seeds: number[];
  echo: boolean;
  stream: boolean;
  returnTokenIds: boolean;
}

/** The model's tokenizer and chat template as vLLM applies them. */
export class LlamaText {
  private readonly template: Template | null;
  private readonly vocabulary: readonly string[];

  constructor(private readonly model: LlamaModel) {
    const { tokenizer } = model.fileInfo.metadata as { tokenizer?: { chat_template?: string; ggml?: { tokens?: readonly string[] } } };
    this.template = tokenizer?.chat_template ? new Template(tokenizer.chat_template) : null;
    this.vocabulary = tokenizer?.ggml?.tokens ?? [];
  }

  /** The tokenizer's own string of each token (`convert_ids_to_tokens`: SentencePiece's `▁word`, `<0x0A>`), as vLLM's `return_token_strs` gives them. */
  pieces(tokens: readonly Token[]): string[] {
    return tokens.map((t) => this.vocabulary[t] ?? '');
  }

  /** A completion prompt: with the model's BOS, as vLLM's `add_special_tokens: true`; special-token text is parsed. */
  completionTokens(text: string): Token[] {
    const tokens = this.model.tokenize(text, true);
    const bos = this.model.tokens.bos;
    return this.model.tokens.shouldPrependBosToken && bos !== null ? [bos, ...tokens] : tokens;
  }

  /** A rendered conversation: no BOS added (the template writes what it needs), as vLLM's chat. */
  chatTokens(rendered: string): Token[] {
    return this.model.tokenize(rendered, true);
  }

  /** Messages rendered with the model's own chat template (`add_generation_prompt`, `continue_final_message`). */
  render(body: Body, options: SimOptions): string {
    if (!this.template) {
      throw badRequest('As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.');
    }
    const messages = parseMessages(body['messages']);
    const { addGenerationPrompt, continueFinalMessage } = renderOptions(body, options);
    if (addGenerationPrompt && continueFinalMessage) throw badRequest('Cannot set both `continue_final_message` and `add_generation_prompt` to True.');
    const text = this.template.render({
      messages,
      add_generation_prompt: addGenerationPrompt,
      bos_token: this.model.tokens.bosString ?? '',
      eos_token: this.model.tokens.eosString ?? '',
    });
    if (!continueFinalMessage) return text;
    // vLLM cuts the rendered text right after the final message's content, leaving that turn open.
    const last = messages.at(-1)!.content;
    const at = text.lastIndexOf(last);
    return at < 0 ? text : text.slice(0, at + last.length);
  }

  /** Token ids as vLLM checks them: integers within the vocabulary. */
  checkIds(ids: readonly number[]): Token[] {
    for (const id of ids) if (id < 0 || id >= this.vocabulary.length) throw badRequest(`Token id ${id} is out of vocabulary`, 'prompt');
    return ids as Token[];
  }

  detokenize(tokens: readonly Token[]): string {
    return this.model.detokenize(tokens, true);
  }
}

/** Which generation endpoint a request came to. */
export type LlamaApi = 'completions' | 'chat' | 'chat-batch';

/** `POST /v1/completions`, `/v1/chat/completions` or `/v1/chat/completions/batch` as the llama engine serves it. */
export function parseLlamaRequest(api: LlamaApi, body: Body, text: LlamaText, options: SimOptions): LlamaRequest {
  const chat = api !== 'completions';
  if (body['logprobs'] !== undefined && body['logprobs'] !== null && body['logprobs'] !== false) {
    throw badRequest('logprobs are not served by the llama engine (swarm sim --engine llama)', 'logprobs');
  }
  const stream = optionalBool(body, 'stream');
  const echo = !chat && optionalBool(body, 'echo');
  const n = optionalInt(body, 'n', 1) ?? 1;
  const sampling = samplingFields(body);
  const seed = sampling.seed;
  const prompts =
    api === 'chat-batch'
      ? batchConversations(body).map((conversation) => chatPrompt(conversation, text, options))
      : chat
        ? [chatPrompt(body, text, options)]
        : completionPrompts(body['prompt'], text, options.maxPrompts ?? Infinity, optionalBool(body, 'add_special_tokens', true));
  for (const p of prompts) if (p.tokens.length === 0) throw badRequest('The decoder prompt cannot be empty', 'prompt');
  return {
    chat,
    model: requestedModel(body),
    prompts,
    n,
    maxTokens: chat
      ? (optionalInt(body, 'max_completion_tokens', 1) ?? optionalInt(body, 'max_tokens', 1))
      : (optionalInt(body, 'max_tokens', echo ? 0 : 1) ?? 16),
    stop: sampling.stop,
    ignoreEos: sampling.ignoreEos,
    // vLLM samples at temperature 1 unless told (or the model's generation config says) otherwise.
    temperature: sampling.temperature ?? 1,
    seeds: Array.from({ length: n }, (_, j) => (seed === undefined ? randomInt(2 ** 31) : seed + j)),
    echo,
    stream,
    ...streamUsage(body, stream),
    returnTokenIds: options.returnTokenIds && optionalBool(body, 'return_token_ids'),
  };
}

function chatPrompt(body: Body, text: LlamaText, options: SimOptions): LlamaPrompt {
  const rendered = text.render(body, options);
  return { tokens: text.chatTokens(rendered), text: rendered };
}

/** A completion's prompts, in the shapes vLLM takes (the simulator's own parser); `addSpecial` off: text rendered with its own BOS, none added. */
function completionPrompts(prompt: unknown, text: LlamaText, maxPrompts: number, addSpecial: boolean): LlamaPrompt[] {
  return promptList<LlamaPrompt>(
    prompt,
    maxPrompts,
    (s) => ({ tokens: addSpecial ? text.completionTokens(s) : text.chatTokens(s), text: s }),
    (ids) => {
      const tokens = text.checkIds(ids);
      return { tokens, text: text.detokenize(tokens) };
    },
  );
}

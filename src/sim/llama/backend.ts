import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { LlamaModel } from 'node-llama-cpp';
import type { BackendContext, InferenceBackend } from '../backend.ts';
import { EventStream } from '../event-stream.ts';
import { sendJson } from '../http.ts';
import type { EngineGauges } from '../metrics.ts';
import type { SimOptions } from '../options.ts';
import { badRequest } from '../errors.ts';
import { checkModel, optionalBool, outputBudget, requestedModel, type Body } from '../validation.ts';
import { LlamaEngine, type LlamaOutput } from './engine.ts';
import { LlamaText, parseLlamaRequest, type LlamaPrompt, type LlamaRequest } from './requests.ts';

/** vLLM's usage block; prompt tokens count once per prompt, not per choice. */
const usageOf = (prompt: number, completion: number): object => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });

/** Real llama.cpp inference behind one endpoint: its own context (K sequences) over a model that endpoints share. */
export class LlamaBackend implements InferenceBackend {
  private readonly text: LlamaText;

  private constructor(private readonly engine: LlamaEngine) {
    this.text = new LlamaText(engine.model);
  }

  static async create(model: LlamaModel, parallel: number, contextSize: number): Promise<LlamaBackend> {
    return new LlamaBackend(await LlamaEngine.create(model, parallel, contextSize));
  }

  get maxModelLen(): number {
    return this.engine.contextSize;
  }

  gauges(): EngineGauges[] {
    return [{ running: this.engine.running, waiting: this.engine.waiting, capacity: this.engine.capacity }];
  }

  close(): Promise<void> {
    return this.engine.close();
  }

  tokenize(body: Body, options: SimOptions): object {
    checkModel(requestedModel(body), options.model);
    let tokens;
    // vLLM: a completion prompt gets special tokens (BOS) by default, a conversation does not.
    if (body['messages'] !== undefined) {
      const rendered = this.text.render(body, options);
      tokens = optionalBool(body, 'add_special_tokens', false) ? this.text.completionTokens(rendered) : this.text.chatTokens(rendered);
    } else if (typeof body['prompt'] === 'string') {
      tokens = optionalBool(body, 'add_special_tokens', true) ? this.text.completionTokens(body['prompt']) : this.text.chatTokens(body['prompt']);
    } else {
      throw badRequest("'prompt' must be a string, or 'messages' a list of messages", 'prompt');
    }
    const tokenStrs = optionalBool(body, 'return_token_strs') ? this.text.pieces(tokens) : null;
    return { count: tokens.length, max_model_len: this.maxModelLen, tokens, token_strs: tokenStrs };
  }

  detokenize(body: Body, options: SimOptions): object {
    checkModel(requestedModel(body), options.model);
    const tokens = body['tokens'];
    if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t))) throw badRequest("'tokens' must be a list of integers", 'tokens');
    return { prompt: this.text.detokenize(this.text.checkIds(tokens)) };
  }

  async serve(path: string, body: Body, res: ServerResponse, { options, metrics }: BackendContext): Promise<void> {
    const api = path === '/v1/completions' ? 'completions' : path === '/v1/chat/completions' ? 'chat' : 'chat-batch';
    const request = parseLlamaRequest(api, body, this.text, options);
    metrics.promptsReceived += request.prompts.length;
    checkModel(request.model, options.model);
    // Every prompt is checked before any runs: one that does not fit fails the whole list, as in vLLM.
    const budgets = request.prompts.map((p) => outputBudget(p.tokens.length, request.maxTokens, this.maxModelLen, options.contextError));
    const promptTokens = request.prompts.reduce((sum, p) => sum + p.tokens.length, 0);
    metrics.promptTokens += promptTokens;

    const id = `${request.chat ? 'chatcmpl' : 'cmpl'}-${randomUUID().replaceAll('-', '')}`;
    const created = Math.floor(Date.now() / 1000);
    const object = request.chat ? 'chat.completion' : 'text_completion';
    const chunkObject = request.chat ? 'chat.completion.chunk' : 'text_completion';
    const envelope = (kind: string, choices: object[], extra: object = {}): object => ({ id, object: kind, created, model: options.model, choices, ...extra });
    const aborted = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort();
    });

    const { n } = request;
    const stream = request.stream ? new EventStream(res, options) : null;
    const chunk = new ChunkShapes(request);
    let opened = false;
    const send = (index: number, choice: object, tokens: number): void => {
      if (!stream) return;
      const prompt = request.prompts[Math.floor(index / n)]!;
      const usage = request.continuousUsage ? { usage: usageOf(prompt.tokens.length, tokens) } : {};
      if (request.chat && !opened) {
        opened = true;
        for (let i = 0; i < request.prompts.length * n; i++) stream.send(envelope(chunkObject, [{ index: i, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]));
      }
      stream.send(envelope(chunkObject, [choice], usage));
    };

    const outputs = await Promise.allSettled(
      request.prompts.flatMap((prompt, p) =>
        Array.from({ length: n }, async (_, j) => {
          const index = p * n + j;
          let sent = 0;
          let held = '';
          let counted = 0;
          const sampling = { maxTokens: budgets[p]!, stop: request.stop, ignoreEos: request.ignoreEos, temperature: request.temperature, seed: request.seeds[j] };
          const output = await this.engine.generate(prompt.tokens, sampling, aborted.signal, (piece, tokens) => {
            // --stream-interval K: a delta leaves once K more tokens are out (the last chunk takes the rest).
            held += piece;
            if (tokens - counted < options.streamInterval) return;
            send(index, chunk.piece(index, prompt, held, sent === 0), tokens);
            sent += held.length;
            held = '';
            counted = tokens;
          });
          send(index, chunk.last(index, prompt, output, sent), output.tokens.length);
          metrics.sequenceTimed(times(output));
          metrics.generated(output.tokens.length, output.finishReason);
          return output;
        }),
      ),
    );
    if (aborted.signal.aborted) return;
    const failure = outputs.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failure) throw failure.reason;
    const done = outputs.map((o) => (o as PromiseFulfilledResult<LlamaOutput>).value);
    const usage = usageOf(promptTokens, done.reduce((sum, o) => sum + o.tokens.length, 0));
    if (stream) {
      if (request.includeUsage) stream.send(envelope(chunkObject, [], { usage }));
      return stream.end();
    }
    const promptOf = (index: number): LlamaPrompt => request.prompts[Math.floor(index / n)]!;
    const choices = done.map((o, index) => chunk.whole(index, promptOf(index), o));
    const ids = api === 'chat' && request.returnTokenIds ? { prompt_token_ids: request.prompts[0]!.tokens } : {};
    sendJson(res, 200, envelope(object, choices, { usage, ...ids }));
  }
}

/** The choice shapes of completions and chat, whole and streamed, as vLLM writes them. */
class ChunkShapes {
  constructor(private readonly request: LlamaRequest) {}

  whole(index: number, prompt: LlamaPrompt, o: LlamaOutput): object {
    const { chat, echo, returnTokenIds } = this.request;
    const reason = { finish_reason: o.finishReason, stop_reason: o.stopReason };
    if (chat) return { index, message: { role: 'assistant', content: o.text, tool_calls: [] }, logprobs: null, ...reason, ...(returnTokenIds ? { token_ids: o.tokens } : {}) };
    const ids = returnTokenIds ? { token_ids: o.tokens, prompt_token_ids: prompt.tokens } : {};
    return { index, text: (echo ? prompt.text : '') + o.text, logprobs: null, ...reason, ...ids };
  }

  piece(index: number, prompt: LlamaPrompt, text: string, first: boolean): object {
    if (this.request.chat) return { index, delta: { content: text }, logprobs: null, finish_reason: null };
    return { index, text: (this.request.echo && first ? prompt.text : '') + text, logprobs: null, finish_reason: null, stop_reason: null };
  }

  /** A choice's final chunk: the text still held back (if any) and why it ended. */
  last(index: number, prompt: LlamaPrompt, o: LlamaOutput, sent: number): object {
    const rest = o.text.slice(sent);
    const reason = { finish_reason: o.finishReason, stop_reason: o.stopReason };
    if (this.request.chat) return { index, delta: { content: rest }, logprobs: null, ...reason };
    return { index, text: (this.request.echo && sent === 0 ? prompt.text : '') + rest, logprobs: null, ...reason };
  }
}

function times(o: LlamaOutput): { queueMs: number; ttftMs: number; e2eMs: number; tokens: number; tpotMs: number } {
  const first = o.firstTokenMs ?? o.doneMs;
  const tokens = o.tokens.length;
  return { queueMs: o.queueMs, ttftMs: first, e2eMs: o.doneMs, tokens, tpotMs: tokens > 1 ? (o.doneMs - first) / (tokens - 1) : 0 };
}

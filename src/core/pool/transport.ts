import type { Endpoint } from '../endpoints/endpoint.ts';
import { embeddingsBody, readEmbeddings } from '../requests/embeddings.ts';
import type { RequestSignal } from '../http/abort.ts';
import { directRoute } from '../http/base-url.ts';
import { EndpointClient, type StreamTimes } from '../http/endpoint-client.ts';
import { RequestFailure } from '../http/failure.ts';
import type { Meter } from '../http/request-meter.ts';
import { sizeMaxTokens } from '../endpoints/models.ts';
import type { GenerationOptions, PoolOptions } from './options.ts';
import { batchPath, chatBatchBody, chatBody, completionsBody, readChat, readChatBatch, readCompletions, readUsage, renderedAnswer, type Answer, type Rendering, type Usage, type WirePrompt } from '../requests/request-shapes.ts';
import { StreamAnswers } from '../requests/stream-answers.ts';
import type { Member } from './selection.ts';

/** What a run lends every call: its cancel signal, and the meter that counts every request sent for it. */
export interface CallContext extends Meter {
  signal: AbortSignal;
}

/** `/v1/chat/completions` with one prompt, `/v1/completions` with a list, or `/v1/embeddings` with a list. */
export type Shape = 'chat' | 'batch' | 'embed';

/** When an answer's request left and its response headers arrived (`performance.now()`). */
export interface SentTimes {
  sentAt: number;
  firstByteAt: number;
}

/** What one `send` call lends the pool: the request's abort signal, the run's meter, and where notes go. */
export interface SendCall extends Meter {
  signal: RequestSignal;
  stream?: boolean;
  /** Something the run should know once (a batch that took a costlier path to the chat template, and why). */
  note(message: string): void;
  /** Called with `performance.now()` at the headers (and, streamed, each event): stalls and hung endpoints are told by it. */
  onActivity?(at: number): void;
}

/** Where a `send` call's outcomes go; `i` is the prompt's position in the list sent. */
export interface SendSink {
  onAnswer(i: number, answer: Answer, times: SentTimes): void;
  /** The server rejected this prompt itself (a 400 isolated by bisection). */
  onPromptError(i: number, failure: RequestFailure): void;
  /** `own`: the usage covers one prompt alone, so it is that prompt's. */
  onUsage(usage: Usage, own: boolean): void;
  onGap(ms: number): void;
  /** A generation request carrying prompt `i` was written (once per request: retries, halves and keys renewed each count). */
  onCarried(i: number): void;
}

/** One generation request to one endpoint: its prompts (from `offset` of the list its sink numbers), shape and rendering. */
export interface Outgoing {
  member: Member;
  model: string;
  prompts: readonly WirePrompt[];
  /** Where `prompts[0]` sits in the list the sink numbers. */
  offset: number;
  shape: Shape;
  rendering: Rendering;
  gen: GenerationOptions;
  call: SendCall;
  sink: SendSink;
}

/** One HTTP client per endpoint, over its route, and the generation request on the wire (JSON or streamed). */
export class Transport {
  readonly clients: EndpointClient[];

  constructor(
    endpoints: ReadonlyArray<{ readonly endpoint: Endpoint; readonly id: string }>,
    private readonly options: PoolOptions,
  ) {
    const headers: Record<string, string> = { 'user-agent': 'swarm-lab' };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    this.clients = endpoints.map((s) => {
      const route = options.routes?.get(s.id) ?? directRoute(s.endpoint, options.caCertificates);
      return new EndpointClient(
        route,
        { connections: options.connectionsPerEndpoint, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 10_000 },
        headers,
        s.id,
        options.credentials?.get(s.id),
      );
    });
  }

  /** One HTTP request: JSON, or an event stream whose answers are released as each finishes. */
  async request(o: Outgoing): Promise<void> {
    const { member, model, prompts, offset, shape, rendering, gen, call, sink } = o;
    const n = gen.n ?? 1;
    const stream = Boolean(call.stream);
    // Sizing counts characters (4 per token); a rendered prompt's exact token count is put in those units.
    const longest = prompts.reduce((m, p) => Math.max(m, typeof p === 'string' ? p.length : 4 * p.length), 0);
    const maxTokens = maxTokensFor(member, gen, longest);
    const chatBatch = rendering.template === 'chat-batch';
    const body =
      shape === 'chat'
        ? chatBody(prompts[0] as string, gen, model, maxTokens, stream)
        : chatBatch
          ? chatBatchBody(prompts as readonly string[], gen, model, maxTokens)
          : completionsBody(prompts, gen, model, maxTokens, stream, rendering);
    const finish = (answer: Answer): Answer => (shape === 'batch' ? renderedAnswer(answer, rendering) : answer);
    const path = shape === 'chat' ? '/v1/chat/completions' : batchPath(rendering);
    const client = this.clients[member.slot]!;
    const meter = carrying(call, sink, offset, prompts.length);
    if (!stream) {
      const timeout = shape === 'chat' ? this.options.timeoutMs : this.batchTimeoutMs(prompts.length * n);
      // vLLM sends an unstreamed answer's headers once it is generated: from then on the endpoint has answered.
      const onHeaders = call.onActivity && ((at: number) => call.onActivity!(at));
      const ex = await client.json('POST', path, body, timeout, call.signal, { onHeaders, meter, maxBytes: responseCap(prompts, n, maxTokens) });
      const answers = shape === 'chat' ? [readChat(ex.body, n)] : chatBatch ? readChatBatch(ex.body, prompts.length) : readCompletions(ex.body, prompts.length, n);
      const usage = readUsage(ex.body);
      if (usage) sink.onUsage(usage, prompts.length === 1);
      const times = { sentAt: ex.sentAt, firstByteAt: ex.firstByteAt };
      let lost = 0;
      for (let i = 0; i < answers.length; i++) {
        const answer = answers[i];
        if (answer) sink.onAnswer(offset + i, finish(answer), times);
        else lost++;
      }
      // Choices without text: those prompts alone go to another endpoint (the others are answered).
      if (lost) throw new RequestFailure('http', `${lost} of ${answers.length} choices came without text`);
      return;
    }
    let times: StreamTimes = { sentAt: performance.now(), firstByteAt: performance.now() };
    const answers = new StreamAnswers(prompts.length, n, { onAnswer: (i, a) => sink.onAnswer(offset + i, finish(a), times), onGap: (ms) => sink.onGap(ms) });
    const { done } = await client.stream(path, body, this.options.timeoutMs, call.signal, (event, at) => {
      call.onActivity?.(at);
      answers.add(event, at);
    }, (t) => {
      times = t;
      call.onActivity?.(t.firstByteAt);
    }, meter);
    // No [DONE] (a proxy cut the tail, a server that never sends it): fine when every choice finished; else the rest was lost.
    if (!done && !answers.allFinished) throw new RequestFailure('reset', `the event stream of ${path} ended before [DONE]`);
    answers.end();
    if (answers.usage) sink.onUsage(answers.usage, prompts.length === 1);
  }

  /** `POST /v1/embeddings` with the list (grouped and capped as batches are); each vector reaches `sink` as an answer. */
  async embed(member: Member, model: string, inputs: readonly string[], call: SendCall, sink: SendSink): Promise<void> {
    const ex = await this.clients[member.slot]!.json('POST', '/v1/embeddings', embeddingsBody(inputs, model), this.batchTimeoutMs(inputs.length), call.signal, { meter: carrying(call, sink, 0, inputs.length) });
    const times = { sentAt: ex.sentAt, firstByteAt: ex.firstByteAt };
    const usage = readUsage(ex.body);
    if (usage) sink.onUsage(usage, inputs.length === 1);
    readEmbeddings(ex.body, inputs.length).forEach((embedding, i) => sink.onAnswer(i, { text: null, reasoning: null, finishReason: null, embedding }, times));
  }

  /** Aurora-Swarm's wave-scaled batch timeout: max(timeout, ceil(n / maxNumSeqs) · per-sequence), optionally capped. */
  batchTimeoutMs(sequences: number): number {
    const o = this.options;
    const waves = Math.max(1, Math.ceil(sequences / o.maxNumSeqs));
    const effective = Math.max(o.timeoutMs, waves * o.timeoutPerSequenceMs);
    return o.batchTimeoutCapMs ? Math.min(effective, o.batchTimeoutCapMs) : effective;
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.close()));
  }
}

function maxTokensFor(member: Member, gen: GenerationOptions, promptChars: number): number {
  if (gen.maxTokens !== undefined) return gen.maxTokens;
  const chars = promptChars + (gen.system?.length ?? 0);
  return sizeMaxTokens(chars, member.maxModelLen, gen.defaultMaxTokens ?? 512, gen.contextBuffer ?? 512);
}

/**
 * The most bytes an unstreamed answer to these prompts can honestly take: every choice's
 * `max_tokens` at a generous 64 bytes a token (text escaped as JSON, its id, logprobs aside), each
 * prompt's ids back (`prompt_token_ids`, ~8 bytes per character at worst), and a MiB to spare.
 */
function responseCap(prompts: readonly WirePrompt[], n: number, maxTokens: number): number {
  let promptBytes = 0;
  for (const p of prompts) promptBytes += 8 * p.length;
  return 2 ** 20 + n * prompts.length * (maxTokens * 64 + 1024) + n * promptBytes;
}

/** The run's meter for a generation request carrying `count` prompts from `offset`: each is told it was carried. */
function carrying(call: SendCall, sink: SendSink, offset: number, count: number): Meter {
  return {
    sent(endpoint, path) {
      call.sent(endpoint, path);
      for (let i = 0; i < count; i++) sink.onCarried(offset + i);
    },
  };
}

import type { LlamaContext, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import type { FinishReason } from '../replies.ts';
import { TextTail } from './text-tail.ts';

/** What one sequence is asked to generate. */
export interface LlamaSampling {
  maxTokens: number;
  stop: readonly string[];
  ignoreEos: boolean;
  /** 0 = greedy. */
  temperature: number;
  seed: number | undefined;
}

/** One finished sequence. */
export interface LlamaOutput {
  /** Every sampled token, an end-of-generation token included (vLLM counts it). */
  tokens: Token[];
  /** The text the client reads: specials left out, cut before a stop string. */
  text: string;
  finishReason: FinishReason;
  stopReason: string | null;
  queueMs: number;
  firstTokenMs: number | null;
  doneMs: number;
}

/**
 * One llama.cpp context with K sequences, like one vLLM engine with `--max-num-seqs K`: requests
 * beyond K wait in arrival order; the K running ones are decoded together in one batch by node-llama-cpp.
 */
export class LlamaEngine {
  private readonly free: LlamaContextSequence[];
  private readonly queue: Array<() => void> = [];
  running = 0;

  private constructor(
    readonly model: LlamaModel,
    private readonly context: LlamaContext,
  ) {
    this.free = Array.from({ length: context.totalSequences }, () => context.getSequence());
  }

  static async create(model: LlamaModel, parallel: number, contextSize: number): Promise<LlamaEngine> {
    // Each sequence gets the whole window: llama.cpp splits contextSize across sequences.
    const context = await model.createContext({ sequences: parallel, contextSize: contextSize * parallel, threads: 1, failedCreationRemedy: false });
    samplingOneAtATime(context);
    return new LlamaEngine(model, context);
  }

  get waiting(): number {
    return this.queue.length;
  }

  get capacity(): number {
    return this.context.totalSequences;
  }

  /** Tokens per sequence. */
  get contextSize(): number {
    return Math.floor(this.context.contextSize / this.context.totalSequences);
  }

  /**
   * Generates from `prompt` until end-of-generation (unless ignored), a stop string or maxTokens;
   * `onText` gets each new piece of client text as it becomes final (what it held back at the end is
   * the output's text past what it was given). Aborting ends it early.
   */
  async generate(prompt: Token[], sampling: LlamaSampling, signal: AbortSignal, onText?: (piece: string, tokens: number) => void): Promise<LlamaOutput> {
    const arrived = performance.now();
    const sequence = await this.acquire(signal);
    const started = performance.now();
    const tokens: Token[] = [];
    const tail = new TextTail(this.model, sampling.stop);
    let firstAt: number | null = null;
    let finishReason: FinishReason = 'length';
    try {
      await sequence.clearHistory();
      if (sampling.maxTokens > 0) {
        const options = { temperature: sampling.temperature, yieldEogToken: true, ...(sampling.seed === undefined ? {} : { seed: sampling.seed }) };
        for await (const token of sequence.evaluate(prompt, options)) {
          firstAt ??= performance.now();
          tokens.push(token);
          const eog = this.model.isEogToken(token);
          const piece = tail.push(token);
          if (tail.stopped || (eog && !sampling.ignoreEos)) {
            finishReason = 'stop';
            break;
          }
          if (piece) onText?.(piece, tokens.length);
          if (tokens.length >= sampling.maxTokens || signal.aborted) break;
        }
      }
    } finally {
      this.release(sequence);
    }
    const done = performance.now();
    return { tokens, text: tail.text, finishReason, stopReason: tail.stopReason, queueMs: started - arrived, firstTokenMs: firstAt === null ? null : firstAt - arrived, doneMs: done - arrived };
  }

  async close(): Promise<void> {
    await this.context.dispose();
  }

  private async acquire(signal: AbortSignal): Promise<LlamaContextSequence> {
    signal.throwIfAborted();
    while (this.free.length === 0) {
      await new Promise<void>((resolve) => this.queue.push(resolve));
      if (signal.aborted) {
        this.queue.shift()?.(); // the wake-up this waiter took goes on to the next
        signal.throwIfAborted();
      }
    }
    this.running++;
    return this.free.pop()!;
  }

  private release(sequence: LlamaContextSequence): void {
    this.running--;
    this.free.push(sequence);
    this.queue.shift()?.();
  }
}

/**
 * node-llama-cpp samples every sequence of a decoded batch at once, each on a thread of libuv's
 * pool, and each sample reads its logits with llama_get_logits_ith. llama.cpp puts a batch's
 * outputs back in batch order lazily, in that very call (output_reorder swaps rows, then forgets
 * the swaps): two threads in it at once both swap, and two sequences take each other's logits.
 * Greedy answers of two prompts then crossed mid-answer, the next token of one continuing the
 * other (9 of 60 runs of 8 prompts at --parallel 4 on a loaded machine; never at --parallel 1).
 * Sampling one at a time per context keeps the reorder to one thread; the decode, the costly part,
 * still takes every sequence in one batch. `_ctx` is node-llama-cpp's own (pinned 3.21.1).
 */
function samplingOneAtATime(context: LlamaContext): void {
  const native = (context as unknown as { _ctx?: { sampleToken?: (...args: unknown[]) => Promise<unknown> } })._ctx;
  const sample = native?.sampleToken;
  if (!native || typeof sample !== 'function') throw new Error('node-llama-cpp changed: its context has no sampleToken to put in line (the llama engine is tested with node-llama-cpp 3.21.1)');
  let last: Promise<unknown> = Promise.resolve();
  // The native method is read-only on its prototype: the instance gets its own.
  Object.defineProperty(native, 'sampleToken', {
    configurable: true,
    value: (...args: unknown[]) => {
      const next = last.then(() => sample.apply(native, args));
      last = next.catch(() => undefined);
      return next;
    },
  });
}

import { RequestFailure } from '../http/failure.ts';
import { choiceCountMessage, readUsage, type Answer, type PromptTokens, type Usage } from './request-shapes.ts';

/** Where a streamed request's answers and inter-token gaps go as they arrive. */
export interface StreamSink {
  /** Prompt `p` of the request has every choice finished. */
  onAnswer(p: number, answer: Answer): void;
  /** One inter-token latency, ms (vLLM bench's ITL), once per delta after a choice's first read. */
  onGap(ms: number): void;
}

interface ChoiceState {
  text: string[];
  reasoning: string[] | null;
  /** Output arrived (a delta with text): the first one's time is TTFT's. */
  produced: boolean;
  /** The choice's own counts so far, from `continuous_usage_stats` (never a count of deltas: a delta may hold several tokens, or none). */
  counts: PromptTokens | null;
  firstAt: number;
  /** When the read that brought its latest delta arrived. */
  lastAt: number;
  /** The read before that one (NaN while its deltas came in the first read: those are TTFT's), and the deltas of the latest read. */
  prevAt: number;
  burst: number;
  finish: string | null;
}

interface Delta {
  index?: unknown;
  text?: unknown;
  delta?: { content?: unknown; reasoning?: unknown; reasoning_content?: unknown };
  finish_reason?: unknown;
}

/**
 * Assembles the choices of one streamed `/v1/completions` or `/v1/chat/completions` request (choice
 * index = prompt·n + j). With n = 1 a prompt's answer is final the moment its `finish_reason`
 * arrives; with n > 1 answers wait for the stream's end, where the choice count proves the server
 * honoured `n` — until then index j of prompt p cannot be told from prompt p+1's.
 */
export class StreamAnswers {
  usage: Usage | null = null;
  private readonly choices: Array<ChoiceState | undefined>;
  private finished = 0;

  constructor(
    private readonly prompts: number,
    private readonly n: number,
    private readonly sink: StreamSink,
  ) {
    this.choices = new Array(prompts * n);
  }

  add(event: unknown, at: number): void {
    const usage = readUsage(event);
    const list = (event as { choices?: unknown } | null)?.choices;
    if (!Array.isArray(list) || !list.length) {
      if (usage) this.usage = usage; // the trailing chunk: the request's total
      return;
    }
    for (const raw of list as Delta[]) {
      // Only a request of one choice may leave its index out: otherwise the delta could be any prompt's.
      const index = raw.index === undefined && this.choices.length === 1 ? 0 : raw.index;
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= this.choices.length) {
        throw new RequestFailure('protocol', `streamed choice index ${String(index)} outside 0..${this.choices.length - 1}`);
      }
      // continuous_usage_stats: a chunk of one choice carries that choice's prompt and its output so far.
      this.addDelta(index as number, raw, at, list.length === 1 ? usage : null);
    }
  }

  private addDelta(index: number, raw: Delta, at: number, usage: Usage | null): void {
    let c = this.choices[index];
    if (c?.finish) throw new RequestFailure('protocol', `streamed choice ${index} continued after its finish_reason`);
    const piece = typeof raw.text === 'string' ? raw.text : typeof raw.delta?.content === 'string' ? raw.delta.content : '';
    const thought = raw.delta ? (raw.delta.reasoning ?? raw.delta.reasoning_content) : undefined;
    const produced = piece !== '' || (typeof thought === 'string' && thought !== '');
    if (!c) c = this.choices[index] = { text: [], reasoning: null, produced: false, counts: null, firstAt: at, lastAt: at, prevAt: NaN, burst: 0, finish: null };
    if (usage) c.counts = { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens };
    if (produced) {
      if (!c.produced) c.firstAt = at;
      else if (at !== c.lastAt) {
        this.gaps(c);
        c.prevAt = c.lastAt;
      }
      c.burst++;
      c.produced = true;
      c.lastAt = at;
      if (piece) c.text.push(piece);
      if (typeof thought === 'string' && thought) (c.reasoning ??= []).push(thought);
    }
    if (typeof raw.finish_reason === 'string') {
      this.gaps(c);
      c.finish = raw.finish_reason;
      this.finished++;
      if (this.n === 1) this.sink.onAnswer(index, answerOf([c]));
    }
  }

  /**
   * The inter-token gaps of a choice's latest read: the time since its read before, shared by the
   * deltas that read brought. A client that falls behind a fast server reads several deltas of a
   * choice at once; a gap of 0 for each of them (and a long one for the first) would make ITL's
   * median 0 and its tail the client's own pauses. Deltas that came with the first are in TTFT's
   * read, with no gap before them to share.
   */
  private gaps(c: ChoiceState): void {
    if (c.burst && !Number.isNaN(c.prevAt)) {
      const gap = (c.lastAt - c.prevAt) / c.burst;
      for (let k = 0; k < c.burst; k++) this.sink.onGap(gap);
    }
    c.burst = 0;
  }

  /** Every choice has its finish_reason. */
  get allFinished(): boolean {
    return this.finished === this.choices.length;
  }

  /** At `[DONE]`: every choice must have finished; with n > 1 this is where answers are released. */
  end(): void {
    if (this.finished !== this.choices.length) {
      throw new RequestFailure('protocol', choiceCountMessage(this.finished, this.prompts, this.n));
    }
    if (this.n === 1) return;
    for (let p = 0; p < this.prompts; p++) this.sink.onAnswer(p, answerOf(this.choices.slice(p * this.n, (p + 1) * this.n) as ChoiceState[]));
  }
}

function answerOf(choices: ChoiceState[]): Answer {
  const first = choices[0]!;
  const answer: Answer = {
    text: first.text.length || !first.reasoning ? first.text.join('') : null,
    reasoning: first.reasoning?.join('') ?? null,
    finishReason: first.finish,
    stream: { firstTokenAt: choices.reduce((t, c) => Math.min(t, c.firstAt), Infinity), lastTokenAt: choices.reduce((t, c) => Math.max(t, c.lastAt), 0) },
  };
  if (choices.every((c) => c.counts)) {
    answer.tokens = { promptTokens: first.counts!.promptTokens, completionTokens: choices.reduce((s, c) => s + c.counts!.completionTokens!, 0) };
  }
  if (choices.length > 1) answer.texts = choices.map((c) => c.text.join(''));
  return answer;
}

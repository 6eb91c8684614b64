import type { GenerationOptions } from '../pool/options.ts';
import type { SentTimes } from '../pool/transport.ts';
import type { Answer, Usage } from '../requests/request-shapes.ts';
import type { TemplatePath } from '../templating/setting.ts';

/** One prompt going into a run; `input` carries the rest of its input line, untouched. */
export interface PromptInput {
  prompt: string;
  input?: Record<string, unknown>;
}

/**
 * Prompts by index: an array, or a prompts file held as its bytes (`PromptFile`), whose prompts
 * become strings only when asked for.
 */
export interface PromptList {
  readonly length: number;
  at(index: number): PromptInput | undefined;
}

export type PromptStatus = 'ok' | 'failed' | 'cancelled';

/** Milliseconds since the run started; null where the prompt never got that far. */
export interface PromptTimings {
  queuedMs: number;
  sentMs: number | null;
  /** Response headers arrived. */
  firstByteMs: number | null;
  /** Streamed only: the first output token arrived (TTFT = firstTokenMs − sentMs). */
  firstTokenMs: number | null;
  doneMs: number;
}

/** Exactly one per prompt, in input order: the only shape in which answers leave the core. */
export interface PromptResult {
  index: number;
  /** The prompt as sent (before any system prompt), so every row stands on its own. */
  prompt: string;
  status: PromptStatus;
  ok: boolean;
  /** The answer (`content`); never a reasoning model's chain of thought unless asked to fall back. */
  text: string;
  reasoning: string | null;
  error: string | null;
  /** `host:port` of the real endpoint that answered (or last tried), never a tunnel's local address. */
  endpoint: string | null;
  finishReason: string | null;
  /**
   * This prompt's own tokens, from the server: its usage when the request held it alone, its choices'
   * token ids (`return_token_ids`), or a stream's per-choice usage (`continuous_usage_stats`); never
   * counted from deltas. Null where the server did not tell them.
   */
  promptTokens: number | null;
  completionTokens: number | null;
  /** HTTP requests that carried this prompt, retries, failovers and hedges included. */
  attempts: number;
  timings: PromptTimings;
  /** The other fields of the prompt's input line (`{}` when it had none). */
  input: Record<string, unknown>;
  /** Every choice's text when `n` > 1, in choice order. */
  texts?: string[];
  /** Tree-reduce: 0 for leaves, then 1, 2, … for each reduce round. */
  level?: number;
  /** Embedding runs: the input's vector. */
  embedding?: number[];
  /** Batched answers: how the prompt met the chat template (server-rendered token ids, a template file, or raw text). */
  template?: TemplatePath;
}

/** A prompt the run has taken on, waiting for its one result. */
export interface Slot extends PromptInput {
  index: number;
  queuedMs: number;
  level?: number;
}

/** The run's clock, as result builders need it. */
export interface Clock {
  /** ms since the run started. */
  now(): number;
  /** ms since the run started, for a `performance.now()` reading. */
  since(perfTime: number): number;
}

export function normalizePrompts(prompts: ReadonlyArray<string | PromptInput>): PromptInput[] {
  return prompts.map((p) => (typeof p === 'string' ? { prompt: p } : p));
}

/** The error of a prompt a drained run never sent: resumable, not the prompt's fault. */
export const DRAINED = 'drained: not sent (the run was drained; --resume sends it)';

/** How the errors of prompts a job's end cancelled begin (the walltime, or an early end). */
export const BY_WALLTIME = 'cancelled by walltime';
export const BY_JOB_END = 'cancelled by job end';

/**
 * Why a run stopped at its job's walltime: the prompts in flight and unsent are cancelled (their
 * servers end now), not failed, and `--resume` sends them to the next job's servers.
 */
export function walltimeReached(jobId: string): string {
  return `${BY_WALLTIME}: job ${jobId} reached its walltime (--resume finishes it on the next job)`;
}

/**
 * Why a run stopped when its job ended before its walltime (a node lost, cancelled outside the run,
 * failed): its servers are gone, so the prompts in flight and unsent are cancelled, not failed over
 * into failures, and `--resume` sends them to the next job's servers. `how` is the scheduler's word.
 */
export function jobEnded(jobId: string, how: string): string {
  return `${BY_JOB_END}: job ${jobId} ended before its walltime (${how}) (--resume finishes it on the next job)`;
}

/** A result for a prompt that got no answer: it failed (`sentMs`: its last request's send, when one was sent), or the run was cancelled first. */
export function failedResult(slot: Slot, status: 'failed' | 'cancelled', error: string, doneMs: number, endpoint: string | null = null, attempts = 0, sentMs: number | null = null): PromptResult {
  const result: PromptResult = {
    index: slot.index,
    prompt: slot.prompt,
    status,
    ok: false,
    text: '',
    reasoning: null,
    error,
    endpoint,
    finishReason: null,
    promptTokens: null,
    completionTokens: null,
    attempts,
    timings: { queuedMs: slot.queuedMs, sentMs, firstByteMs: null, firstTokenMs: null, doneMs },
    input: slot.input ?? {},
  };
  if (slot.level !== undefined) result.level = slot.level;
  return result;
}

/**
 * A prompt's answer as its result. A reasoning model cut off by max_tokens before it answered has no
 * answer: that is a failure, unless asked to fall back to the reasoning text as Aurora-Swarm does.
 */
export function answeredResult(slot: Slot, endpoint: string, attempts: number, answer: Answer, times: SentTimes, ownUsage: Usage | null, clock: Clock, gen: GenerationOptions): PromptResult {
  const truncated = answer.text === null && answer.finishReason === 'length' && !(gen.reasoningFallback && answer.reasoning);
  const error = truncated
    ? `truncated: the model spent its whole max_tokens budget${answer.reasoning ? ' on reasoning' : ''} before answering (finish_reason "length"); raise max_tokens`
    : null;
  const streamed = answer.stream;
  const result: PromptResult = {
    index: slot.index,
    prompt: slot.prompt,
    status: truncated ? 'failed' : 'ok',
    ok: !truncated,
    text: truncated ? '' : (answer.text ?? (gen.reasoningFallback ? (answer.reasoning ?? '') : '')),
    reasoning: answer.reasoning,
    error,
    endpoint,
    finishReason: answer.finishReason,
    promptTokens: answer.tokens?.promptTokens ?? ownUsage?.promptTokens ?? null,
    completionTokens: answer.tokens?.completionTokens ?? ownUsage?.completionTokens ?? null,
    attempts,
    timings: {
      queuedMs: slot.queuedMs,
      sentMs: clock.since(times.sentAt),
      firstByteMs: clock.since(times.firstByteAt),
      firstTokenMs: streamed ? clock.since(streamed.firstTokenAt) : null,
      doneMs: streamed ? clock.since(streamed.lastTokenAt) : clock.now(),
    },
    input: slot.input ?? {},
  };
  // Assigned, not spread from conditional literals: a run writes one JSON row per result, and
  // objects built by spreading stringify ~30 % slower (100,000 rows: 490 ms of a 1.5 s run).
  if (answer.texts) result.texts = answer.texts;
  if (answer.embedding) result.embedding = answer.embedding;
  if (answer.template) result.template = answer.template;
  if (slot.level !== undefined) result.level = slot.level;
  return result;
}

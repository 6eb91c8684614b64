/** One prompt going into a run; `input` carries the rest of its input line, untouched. */
export interface PromptInput {
  prompt: string;
  input?: Record<string, unknown>;
}

export type PromptStatus = 'ok' | 'failed' | 'cancelled';

/** Milliseconds since the run started; null where the prompt never got that far. */
export interface PromptTimings {
  queuedMs: number;
  sentMs: number | null;
  firstByteMs: number | null;
  doneMs: number;
}

/** Exactly one per prompt, in input order: the only shape in which answers leave the core. */
export interface PromptResult {
  index: number;
  status: PromptStatus;
  ok: boolean;
  /** The answer (`content`); never a reasoning model's chain of thought unless asked to fall back. */
  text: string;
  reasoning: string | null;
  error: string | null;
  /** `host:port` of the real endpoint that answered (or last tried), never a tunnel's local address. */
  endpoint: string | null;
  finishReason: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  /** HTTP attempts spent on this prompt's request, failovers included. */
  attempts: number;
  timings: PromptTimings;
  /** The other fields of the prompt's input line (`{}` when it had none). */
  input: Record<string, unknown>;
  /** Every choice's text when `n` > 1, in choice order. */
  texts?: string[];
  /** Tree-reduce: 0 for leaves, then 1, 2, … for each reduce round. */
  level?: number;
}

export function normalizePrompts(prompts: ReadonlyArray<string | PromptInput>): PromptInput[] {
  return prompts.map((p) => (typeof p === 'string' ? { prompt: p } : p));
}

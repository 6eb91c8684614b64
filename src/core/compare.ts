import { randomUUID } from 'node:crypto';
import { scatterGather, type ScatterOptions } from './patterns/scatter-gather.ts';
import type { SwarmPool } from './pool.ts';
import type { PromptInput, PromptResult } from './result.ts';
import type { Run } from './run.ts';
import type { RunSummary } from './summary.ts';
import { TEMPLATE_PATH_NOTES, type TemplatePath } from './templating/setting.ts';

export type Arm = 'batched' | 'individual';

/** One HTTP request of an arm, for the timeline chart (ms since the arm started). */
export interface RequestSpan {
  endpoint: string;
  sentMs: number;
  doneMs: number;
  prompts: number;
  /** Prompts of the request that failed, and the first one's error (absent when none did). */
  failed?: number;
  error?: string;
}

/** One arm's figures in one round. */
export interface ArmRound {
  arm: Arm;
  round: number;
  summary: RunSummary;
  requests: RequestSpan[];
  /** End-to-end latency of every successful prompt, ms. */
  latenciesMs: number[];
  /** The `cache_salt` its requests carried, when salted. */
  cacheSalt?: string;
}

export interface Comparison {
  rounds: ArmRound[];
  cacheSalt: boolean;
  /** Which path each arm took, in words. */
  templatePaths: { batched: string; individual: string };
  /** How the batched arm's prompts met the chat template (`mixed` when endpoints differed); null before it answered. */
  template: TemplatePath | 'mixed' | null;
  cancelled: boolean;
  /** Why the comparison stopped short, if it did. */
  error: string | null;
}

export interface CompareOptions extends Omit<ScatterOptions, 'batch'> {
  /** How the batched arm meets the chat template (default `auto`: the server's where it renders, so both arms ask the same question). */
  template?: ScatterOptions['template'];
  /** Rounds of both arms (default 3). */
  rounds?: number;
  /** Salt vLLM's prefix cache per arm and round (`cache_salt`), so no arm reuses another's cache (default true). */
  cacheSalt?: boolean;
  /** Called with each arm's Run right after it is created (before it starts): watch it, show it, cancel it. */
  onArm?: (run: Run, arm: Arm, round: number) => void;
  /** Called with each arm's figures (and results) once its run is done; the next arm waits for a returned promise. */
  onArmDone?: (round: ArmRound, results: readonly PromptResult[]) => void | Promise<void>;
}

export interface ComparisonHandle {
  done: Promise<Comparison>;
  /** Cancels the arm running now and every arm after it; finished rounds are kept. */
  cancel(): void;
}

/** The arms' paths before the batched arm has answered (its template path is known from its results). */
export const TEMPLATE_PATHS = {
  batched: 'POST /v1/completions with the prompt list (chat template: as --template says)',
  individual: 'POST /v1/chat/completions per prompt: the server applies the chat template',
} as const;

/** Round r runs batched first when r is even, individual first when odd (ABBA…), so neither arm always goes first. */
export function armOrder(round: number): [Arm, Arm] {
  return round % 2 === 0 ? ['batched', 'individual'] : ['individual', 'batched'];
}

/**
 * Batched vs individual on the same prompts, made fair: the arms alternate over several rounds
 * (ABBA…) and each arm, in each round, may salt vLLM's prefix cache so it never rides on a cache
 * another arm (or round) warmed. The arms run one after the other, never at once.
 */
export function compareBatching(pool: SwarmPool, prompts: ReadonlyArray<string | PromptInput>, options: CompareOptions = {}): ComparisonHandle {
  const { rounds = 3, cacheSalt = true, onArm, onArmDone, template = 'auto', ...runOptions } = options;
  if (!Number.isInteger(rounds) || rounds < 1) throw new RangeError(`rounds must be a whole number of at least 1 (got ${rounds})`);
  const nonce = randomUUID().slice(0, 8);
  let current: Run | undefined;
  let cancelled = false;
  const done = (async (): Promise<Comparison> => {
    await Promise.resolve(); // the caller holds the handle before the first onArm
    const out: Comparison = { rounds: [], cacheSalt, templatePaths: { ...TEMPLATE_PATHS }, template: null, cancelled: false, error: null };
    for (let round = 0; round < rounds; round++) {
      for (const arm of armOrder(round)) {
        if (cancelled) return { ...out, cancelled: true, error: 'cancelled' };
        const extra = cacheSalt ? { ...runOptions.extra, cache_salt: `swarm-lab-${nonce}-r${round}-${arm}` } : runOptions.extra;
        const batch = arm === 'batched';
        const run = scatterGather(pool, prompts, { ...runOptions, ...(extra ? { extra } : {}), ...(batch ? { template } : {}), batch });
        current = run;
        onArm?.(run, arm, round);
        const report = await run.done;
        const salt = cacheSalt ? (extra?.cache_salt as string) : undefined;
        const figures: ArmRound = { arm, round, summary: report.summary, requests: requestSpans(report.results, arm), latenciesMs: latencies(report.results), ...(salt ? { cacheSalt: salt } : {}) };
        if (batch) recordTemplate(out, report.results);
        await onArmDone?.(figures, report.results);
        if (report.cancelled) return { ...out, cancelled: true, error: 'cancelled' };
        out.rounds.push(figures);
        if (report.error) return { ...out, error: report.error };
      }
    }
    return out;
  })();
  return {
    done,
    cancel: () => {
      cancelled = true;
      current?.cancel();
    },
  };
}

/** The batched arm's template path, from what its answers say. */
function recordTemplate(out: Comparison, results: readonly PromptResult[]): void {
  const paths = new Set(results.flatMap((r) => (r.template ? [r.template] : [])));
  if (!paths.size) return;
  const [only] = paths;
  out.template = paths.size === 1 ? only! : 'mixed';
  out.templatePaths.batched = paths.size === 1 ? TEMPLATE_PATH_NOTES[only!] : `mixed: ${[...paths].map((p) => TEMPLATE_PATH_NOTES[p]).join('; ')}`;
}

/**
 * The requests behind an arm's results: a batched arm's prompts sent together share their
 * endpoint and send time; an individual arm sends one request per prompt.
 */
export function requestSpans(results: readonly PromptResult[], arm: Arm): RequestSpan[] {
  const spans = new Map<string, RequestSpan>();
  for (const r of results) {
    if (r.timings.sentMs === null || r.endpoint === null) continue;
    const key = arm === 'batched' ? `${r.endpoint} ${r.timings.sentMs}` : String(r.index);
    let span = spans.get(key);
    if (span) {
      span.prompts++;
      span.doneMs = Math.max(span.doneMs, r.timings.doneMs);
    } else {
      spans.set(key, (span = { endpoint: r.endpoint, sentMs: r.timings.sentMs, doneMs: r.timings.doneMs, prompts: 1 }));
    }
    if (r.status === 'failed') {
      span.failed = (span.failed ?? 0) + 1;
      span.error ??= r.error ?? 'failed';
    }
  }
  return [...spans.values()].sort((a, b) => a.sentMs - b.sentMs);
}

function latencies(results: readonly PromptResult[]): number[] {
  return results.filter((r) => r.status === 'ok' && r.timings.sentMs !== null).map((r) => r.timings.doneMs - r.timings.sentMs!);
}

/** The arm's round with the median wall time (the lower one of an even count): a real round, not an average. */
export function medianRound(rounds: readonly ArmRound[], arm: Arm): ArmRound | undefined {
  const mine = rounds.filter((r) => r.arm === arm).sort((a, b) => a.summary.wallMs - b.summary.wallMs);
  return mine[Math.floor((mine.length - 1) / 2)];
}

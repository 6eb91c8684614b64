import { randomUUID } from 'node:crypto';
import { scatterGather, type ScatterOptions } from '../patterns/scatter-gather.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { PromptInput, PromptResult } from './result.ts';
import type { Run } from './run.ts';
import type { RunSummary } from './summary.ts';
import { TEMPLATE_PATH_NOTES, type TemplatePath } from '../templating/setting.ts';

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

/** What an arm had in flight: the cap it ran under and the most it reached, in prompts and in requests. */
export interface InFlight {
  /** Requests the pool let out at once for this arm (a batch counts once). */
  concurrency: number;
  /** Most prompts sent and not yet answered at one moment. */
  peakPrompts: number;
  /** Most HTTP requests open at one moment, summed over endpoints: the connections the arm needed. */
  peakRequests: number;
}

/** An arm measured by this version of the comparison: its in-flight figures and CPU are there. */
export type MatchedArm = ArmRound & Required<Pick<ArmRound, 'inFlight' | 'cpuMs'>>;

/** One arm's figures in one round. */
export interface ArmRound {
  arm: Arm;
  round: number;
  summary: RunSummary;
  /** Absent in records saved before comparisons were matched. */
  inFlight?: InFlight;
  /** CPU this process spent during the arm (the client's, with whatever else shares its process), ms; absent in older records. */
  cpuMs?: number;
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
  /** Sequences the servers run at once, all together (endpoints × max-num-seqs): the work in flight that fills them. */
  serverSlots: number;
  /** The individual arm's cap on requests in flight. */
  individualConcurrency: number;
}

export interface CompareOptions extends Omit<ScatterOptions, 'batch'> {
  /** How the batched arm meets the chat template (default `auto`: the server's where it renders, so both arms ask the same question). */
  template?: ScatterOptions['template'];
  /** Rounds of both arms (default 3). */
  rounds?: number;
  /** Salt vLLM's prefix cache per arm and round (`cache_salt`), so no arm reuses another's cache (default true). */
  cacheSalt?: boolean;
  /**
   * The individual arm's cap on requests in flight. `match` (default): enough to fill the servers,
   * min(prompts, endpoints × the pool's maxNumSeqs, MATCHED_IN_FLIGHT_MAX), so both arms give the servers the same work in
   * flight and the comparison measures the request shape, not a client-side cap; `pool`: the pool's
   * own concurrency (Aurora-Swarm's semaphore, which holds individual requests to 512); or a number.
   */
  individualConcurrency?: 'match' | 'pool' | number;
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
  const { rounds = 3, cacheSalt = true, onArm, onArmDone, template = 'auto', individualConcurrency = 'match', ...runOptions } = options;
  if (!Number.isInteger(rounds) || rounds < 1) throw new RangeError(`rounds must be a whole number of at least 1 (got ${rounds})`);
  const serverSlots = pool.endpoints.length * pool.options.maxNumSeqs;
  const individualCap = matchedConcurrency(individualConcurrency, prompts.length, serverSlots, pool.options.concurrency);
  const individualPool = individualCap === pool.options.concurrency ? pool : pool.withConcurrency(individualCap);
  const nonce = randomUUID().slice(0, 8);
  let current: Run | undefined;
  let cancelled = false;
  const done = (async (): Promise<Comparison> => {
    await Promise.resolve(); // the caller holds the handle before the first onArm
    const out: Comparison = { rounds: [], cacheSalt, templatePaths: { ...TEMPLATE_PATHS }, template: null, cancelled: false, error: null, serverSlots, individualConcurrency: individualCap };
    for (let round = 0; round < rounds; round++) {
      for (const arm of armOrder(round)) {
        if (cancelled) return { ...out, cancelled: true, error: 'cancelled' };
        const extra = cacheSalt ? { ...runOptions.extra, cache_salt: `swarm-lab-${nonce}-r${round}-${arm}` } : runOptions.extra;
        const batch = arm === 'batched';
        const armPool = batch ? pool : individualPool;
        const cpu = process.cpuUsage();
        const run = scatterGather(armPool, prompts, { ...runOptions, ...(extra ? { extra } : {}), ...(batch ? { template } : {}), batch });
        current = run;
        onArm?.(run, arm, round);
        const report = await run.done;
        const { user, system } = process.cpuUsage(cpu);
        const salt = cacheSalt ? (extra?.cache_salt as string) : undefined;
        const requests = requestSpans(report.results, arm);
        const inFlight = { concurrency: armPool.options.concurrency, ...peaks(report.results, requests) };
        const figures: ArmRound = { arm, round, summary: report.summary, inFlight, cpuMs: (user + system) / 1000, requests, latenciesMs: latencies(report.results), ...(salt ? { cacheSalt: salt } : {}) };
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

/**
 * The most requests `match` keeps open: each needs a socket of its own, and 1,000 servers of 256 slots
 * would otherwise ask one process for 256,000. Past it the verdict says the arms were not matched.
 */
export const MATCHED_IN_FLIGHT_MAX = 10_000;

/** The individual arm's cap: see CompareOptions.individualConcurrency. */
export function matchedConcurrency(setting: 'match' | 'pool' | number, prompts: number, serverSlots: number, poolConcurrency: number): number {
  if (setting === 'pool') return poolConcurrency;
  if (setting === 'match') return Math.max(1, Math.min(prompts, serverSlots, MATCHED_IN_FLIGHT_MAX));
  if (!Number.isInteger(setting) || setting < 1) throw new RangeError(`individualConcurrency must be match, pool or a whole number of at least 1 (got ${setting})`);
  return setting;
}

/** Most prompts and most requests open at one moment, from the results' send and answer times. */
export function peaks(results: readonly PromptResult[], requests: readonly RequestSpan[]): { peakPrompts: number; peakRequests: number } {
  const prompts: Array<[number, number]> = [];
  for (const r of results) if (r.timings.sentMs !== null) prompts.push([r.timings.sentMs, 1], [r.timings.doneMs, -1]);
  return { peakPrompts: peak(prompts), peakRequests: peak(requests.flatMap((q): Array<[number, number]> => [[q.sentMs, 1], [q.doneMs, -1]])) };
}

/** The highest running sum of +1/-1 events in time order (an end before a start at the same instant). */
function peak(events: Array<[number, number]>): number {
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, d] of events) most = Math.max(most, (open += d));
  return most;
}

/**
 * Where the batched arm's gain comes from, in words: whether both arms filled the servers (so their
 * scheduling is the same and the gain is the request shape's), how many fewer requests and
 * connections the batches took, and what that saved the client.
 */
export function gainVerdict(c: Pick<Comparison, 'serverSlots'>, batched: MatchedArm, individual: MatchedArm): string {
  const speed = individual.summary.wallMs / Math.max(1e-3, batched.summary.wallMs);
  const prompts = batched.summary.prompts;
  const fill = Math.min(prompts, c.serverSlots);
  const requests = individual.summary.generationRequests / Math.max(1, batched.summary.generationRequests);
  const cpu = individual.cpuMs / Math.max(1e-3, batched.cpuMs);
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const shape = `${requests.toFixed(1)}× fewer generation requests (${n(batched.summary.generationRequests)} vs ${n(individual.summary.generationRequests)}), ${n(batched.inFlight.peakRequests)} connections at the peak vs ${n(individual.inFlight.peakRequests)}, client CPU ${cpu.toFixed(2)}× lower`;
  if (individual.inFlight.peakPrompts < 0.9 * fill) {
    return `not matched: the individual arm had at most ${n(individual.inFlight.peakPrompts)} prompts in flight where the servers hold ${n(fill)} (cap ${n(individual.inFlight.concurrency)}), so part of the ${speed.toFixed(2)}× is idle server slots, not batching; batching also sent ${shape}`;
  }
  const scheduling = `matched: both arms gave the servers the work that fills them (${n(fill)}: ${prompts <= c.serverSlots ? 'every prompt' : 'every slot'} of ${n(c.serverSlots)}; in flight at the peak, batched ${n(batched.inFlight.peakPrompts)} prompts, individual ${n(individual.inFlight.peakPrompts)}), so server scheduling is the same in both`;
  if (speed < 1.05) return `${scheduling}; batching saved no wall time (${speed.toFixed(2)}×) though it sent ${shape}`;
  return `${scheduling}; the ${speed.toFixed(2)}× comes from fewer requests and connections (less per-request work in the servers' front ends and in the client): ${shape}`;
}

function latencies(results: readonly PromptResult[]): number[] {
  return results.filter((r) => r.status === 'ok' && r.timings.sentMs !== null).map((r) => r.timings.doneMs - r.timings.sentMs!);
}

/** The arm's round with the median wall time (the lower one of an even count): a real round, not an average. */
export function medianRound(rounds: readonly ArmRound[], arm: Arm): ArmRound | undefined {
  const mine = rounds.filter((r) => r.arm === arm).sort((a, b) => a.summary.wallMs - b.summary.wallMs);
  return mine[Math.floor((mine.length - 1) / 2)];
}

import { promptLatencies } from './prompt-latencies.ts';
import type { PromptResult } from './result.ts';

/**
 * Service-level objectives, ms, as `vllm bench serve --goodput ttft:300 tpot:50 e2el:2000` has them
 * (vllm/benchmarks/serve.py, calculate_metrics): a request is good when it meets every objective set.
 */
export interface Slo {
  ttftMs?: number;
  tpotMs?: number;
  e2elMs?: number;
}

export const SLO_METRICS = ['ttft', 'tpot', 'e2el'] as const;

/** Goodput: requests meeting every SLO, and how many per second of the run's wall time (vLLM bench's `request_goodput`). */
export interface Goodput {
  slo: Slo;
  good: number;
  perSecond: number;
}

/**
 * `ttft=300,tpot=50,e2el=2000` (ms; `:` works as vLLM's `ttft:300`, spaces as commas). Throws a one-line
 * Error naming the bad part.
 */
export function parseSlo(text: string): Slo {
  const slo: Slo = {};
  const parts = text.split(/[,\s]+/).filter(Boolean);
  if (!parts.length) throw new Error('expected metric=ms pairs, e.g. ttft=300,tpot=50,e2el=2000');
  for (const part of parts) {
    const m = /^(\w+)[=:](.+)$/.exec(part);
    const metric = m?.[1]?.toLowerCase();
    if (!m || !SLO_METRICS.includes(metric as (typeof SLO_METRICS)[number])) throw new Error(`"${part}": expected ttft=MS, tpot=MS or e2el=MS`);
    const ms = Number(m[2]);
    if (!Number.isFinite(ms) || ms <= 0) throw new Error(`"${part}": ${metric} must be a positive number of milliseconds`);
    slo[`${metric}Ms` as keyof Slo] = ms;
  }
  return slo;
}

/** `ttft ≤ 300 ms · tpot ≤ 50 ms`. */
export function sloText(slo: Slo): string {
  return SLO_METRICS.filter((m) => slo[`${m}Ms`] !== undefined).map((m) => `${m} ≤ ${slo[`${m}Ms`]} ms`).join(' · ');
}

/**
 * Whether one result meets every objective, as vLLM bench judges it: a failed request never does; an
 * answer of one token has TPOT 0; a metric that was not measured (TTFT unstreamed) fails its objective.
 */
export function meetsSlo(r: PromptResult, slo: Slo): boolean {
  if (r.status !== 'ok') return false;
  const l = promptLatencies(r);
  const tpot = l.tpot ?? (r.completionTokens !== null && r.completionTokens <= 1 ? 0 : null);
  const within = (value: number | null, limit: number | undefined) => limit === undefined || (value !== null && value <= limit);
  return within(l.ttft, slo.ttftMs) && within(tpot, slo.tpotMs) && within(l.e2el, slo.e2elMs);
}

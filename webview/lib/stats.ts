/**
 * Figures of a comparison (per arm, over its rounds: the median and the spread) and the data its
 * charts draw. Pure: no DOM, so node tests it.
 */
import { median, speedup } from '../../src/core/run/stats.ts';
import type { ArmRound, ComparisonView } from '../../src/panel/protocol.ts';
import { naturalOrder } from '../../src/core/endpoints/natural-order.ts';

export type Arm = 'batched' | 'individual';
export const ARMS: readonly Arm[] = ['batched', 'individual'];

export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function spread(values: ReadonlyArray<number | null | undefined>): Spread | null {
  const v = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  return { median: median(v), min: v[0]!, max: v[v.length - 1]!, n: v.length };
}

/** The rows of the side-by-side table, in vLLM-bench vocabulary; `better` says which way is good. */
export interface FigureRow {
  label: string;
  unit: 'ms' | 'count' | 'rate';
  better: 'lower' | 'higher' | null;
  arms: Record<Arm, Spread | null>;
}

const FIGURES: Array<{ label: string; unit: FigureRow['unit']; better: FigureRow['better']; pick: (r: ArmRound) => number | null }> = [
  { label: 'wall time', unit: 'ms', better: 'lower', pick: (r) => r.summary.wallMs },
  { label: 'HTTP requests', unit: 'count', better: null, pick: (r) => r.summary.httpRequests },
  { label: 'generation requests', unit: 'count', better: null, pick: (r) => r.summary.generationRequests },
  { label: 'prompts/s', unit: 'rate', better: 'higher', pick: (r) => r.summary.promptThroughput },
  { label: 'output tokens/s', unit: 'rate', better: 'higher', pick: (r) => r.summary.outputTokenThroughput },
  { label: 'E2EL mean', unit: 'ms', better: 'lower', pick: (r) => r.summary.e2el?.meanMs ?? null },
  { label: 'E2EL median', unit: 'ms', better: 'lower', pick: (r) => r.summary.e2el?.medianMs ?? null },
  { label: 'E2EL p99', unit: 'ms', better: 'lower', pick: (r) => r.summary.e2el?.p99Ms ?? null },
  { label: 'prompts ok', unit: 'count', better: 'higher', pick: (r) => r.summary.ok },
  { label: 'prompts failed', unit: 'count', better: 'lower', pick: (r) => r.summary.failed },
];

export const roundsOf = (c: ComparisonView, arm: Arm) => c.rounds.filter((r) => r.arm === arm).sort((a, b) => a.round - b.round);

export function figureRows(c: ComparisonView): FigureRow[] {
  return FIGURES.map((f) => ({
    label: f.label,
    unit: f.unit,
    better: f.better,
    arms: { batched: spread(roundsOf(c, 'batched').map(f.pick)), individual: spread(roundsOf(c, 'individual').map(f.pick)) },
  }));
}

export interface EndpointRow {
  endpoint: string;
  arms: Record<Arm, { requests: number; prompts: number } | null>;
}

/** Per endpoint, per arm: the median over rounds of its HTTP requests and prompts. */
export function endpointRows(c: ComparisonView): EndpointRow[] {
  const names = new Set<string>();
  for (const r of c.rounds) for (const e of r.summary.endpoints) names.add(e.endpoint);
  // Each round's endpoints by name: a lookup per endpoint and round, not a scan (1,000 endpoints).
  const byName = new Map(c.rounds.map((r) => [r, new Map(r.summary.endpoints.map((e) => [e.endpoint, e]))]));
  return [...names]
    .sort(naturalOrder)
    .map((endpoint) => {
      const arms = {} as EndpointRow['arms'];
      for (const arm of ARMS) {
        const rounds = roundsOf(c, arm);
        if (!rounds.length) {
          arms[arm] = null;
          continue;
        }
        const of = (pick: (e: { requests: number; prompts: number }) => number) =>
          spread(rounds.map((r) => {
            const e = byName.get(r)!.get(endpoint);
            return e ? pick(e) : 0;
          }))!.median;
        arms[arm] = { requests: of((e) => e.requests), prompts: of((e) => e.prompts) };
      }
      return { endpoint, arms };
    });
}

/** One arm's load over its endpoints: the spread and the most loaded. */
export interface ArmLoad {
  endpoints: number;
  min: number;
  median: number;
  max: number;
  /** The most loaded endpoints, most first (ties in endpoint order). */
  top: Array<{ endpoint: string; prompts: number }>;
}

/**
 * Endpoints by the prompts they answered (each its median over rounds), per arm: a distribution,
 * which reads at 1,000 endpoints where a bar each is a solid block. Bins of whole prompts: one per
 * count while the counts span at most `bins`, wider ones beyond.
 */
export function loadDistribution(rows: readonly EndpointRow[], bins = 24, topN = 3): { lo: number[]; width: number; counts: Record<Arm, number[]>; arms: Record<Arm, ArmLoad | null> } {
  const values = { batched: [] as number[], individual: [] as number[] };
  for (const r of rows) for (const arm of ARMS) if (r.arms[arm]) values[arm].push(r.arms[arm]!.prompts);
  let min = Infinity;
  let max = -Infinity;
  for (const arm of ARMS) for (const v of values[arm]) (min = Math.min(min, v)), (max = Math.max(max, v));
  const counts = { batched: [] as number[], individual: [] as number[] };
  const arms = { batched: null, individual: null } as Record<Arm, ArmLoad | null>;
  if (min > max) return { lo: [], width: 1, counts, arms };
  const first = Math.floor(min);
  const width = Math.max(1, Math.ceil((Math.floor(max) - first + 1) / bins));
  const n = Math.floor((Math.floor(max) - first) / width) + 1;
  const lo = Array.from({ length: n }, (_, i) => first + i * width);
  for (const arm of ARMS) {
    const v = values[arm];
    if (!v.length) continue;
    const c = new Array<number>(n).fill(0);
    for (const x of v) c[Math.min(n - 1, Math.floor((Math.floor(x) - first) / width))]!++;
    counts[arm] = c;
    const sorted = [...v].sort((a, b) => a - b);
    const top = rows
      .filter((r) => r.arms[arm])
      .map((r) => ({ endpoint: r.endpoint, prompts: r.arms[arm]!.prompts }))
      .sort((a, b) => b.prompts - a.prompts)
      .slice(0, topN);
    arms[arm] = { endpoints: v.length, min: sorted[0]!, median: median(sorted), max: sorted[sorted.length - 1]!, top };
  }
  return { lo, width, counts, arms };
}

/** Shared bins for both arms' latencies: edges (n+1) and counts per arm (n). */
export function histogram(byArm: Record<Arm, readonly number[]>, bins = 30): { edges: number[]; counts: Record<Arm, number[]> } {
  const all = [...byArm.batched, ...byArm.individual];
  const counts = { batched: [] as number[], individual: [] as number[] };
  if (!all.length) return { edges: [], counts };
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of all) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (hi === lo) hi = lo + 1;
  const n = Math.max(1, Math.min(bins, all.length));
  const width = (hi - lo) / n;
  const edges = Array.from({ length: n + 1 }, (_, i) => lo + i * width);
  for (const arm of ARMS) {
    const c = new Array<number>(n).fill(0);
    for (const v of byArm[arm]) c[Math.min(n - 1, Math.floor((v - lo) / width))]!++;
    counts[arm] = c;
  }
  return { edges, counts };
}

export interface Bar {
  endpoint: string;
  /** Row inside the endpoint's lane, so overlapping requests do not hide each other. */
  slot: number;
  sentMs: number;
  doneMs: number;
  prompts: number;
  /** Prompts of the request that failed, and the first error (the core's RequestSpan). */
  failed?: number;
  error?: string;
}

/** Timeline bars per endpoint: each request takes the first free slot of its endpoint's lane. */
export function timelineLanes(requests: ArmRound['requests']): { endpoints: string[]; slots: number[]; bars: Bar[]; endMs: number } {
  const endpoints = [...new Set(requests.map((r) => r.endpoint))].sort(naturalOrder);
  const freeAt = new Map<string, number[]>();
  const bars: Bar[] = [];
  let endMs = 0;
  for (const r of [...requests].sort((a, b) => a.sentMs - b.sentMs)) {
    const lane = freeAt.get(r.endpoint) ?? [];
    let slot = lane.findIndex((t) => t <= r.sentMs);
    if (slot < 0) slot = lane.push(0) - 1;
    lane[slot] = r.doneMs;
    freeAt.set(r.endpoint, lane);
    bars.push({ ...r, slot });
    endMs = Math.max(endMs, r.doneMs);
  }
  return { endpoints, slots: endpoints.map((e) => freeAt.get(e)?.length ?? 1), bars, endMs };
}

/**
 * Requests in flight over time, sampled at `samples` points from 0 to `xMax` (a swarm of 1,000
 * endpoints is read as a density, not a lane each). A sweep over send and done times.
 */
export function inFlight(requests: ArmRound['requests'], xMax: number, samples = 240): { t: number[]; requests: number[]; prompts: number[] } {
  const events: Array<[number, number, number]> = [];
  for (const r of requests) events.push([r.sentMs, 1, r.prompts], [r.doneMs, -1, -r.prompts]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const t: number[] = [];
  const req: number[] = [];
  const pr: number[] = [];
  let k = 0;
  let nowReq = 0;
  let nowPr = 0;
  for (let i = 0; i <= samples; i++) {
    const at = (xMax * i) / samples;
    while (k < events.length && events[k]![0] <= at) {
      nowReq += events[k]![1];
      nowPr += events[k]![2];
      k++;
    }
    t.push(at);
    req.push(nowReq);
    pr.push(nowPr);
  }
  return { t, requests: req, prompts: pr };
}

/** What an arm lost over its rounds: prompts that failed or were cancelled, of those it was given. */
export interface ArmLosses {
  rounds: number;
  prompts: number;
  failed: number;
  cancelled: number;
}

export function armLosses(c: ComparisonView, arm: Arm): ArmLosses {
  const rounds = roundsOf(c, arm);
  const sum = (pick: (r: ArmRound) => number) => rounds.reduce((n, r) => n + pick(r), 0);
  return { rounds: rounds.length, prompts: sum((r) => r.summary.prompts), failed: sum((r) => r.summary.failed), cancelled: sum((r) => r.summary.cancelled ?? 0) };
}

/** "8 of 60 failed · 2 cancelled" over an arm's rounds; '' when it lost nothing. */
export function lossText(l: ArmLosses): string {
  const parts = [l.failed ? `${l.failed.toLocaleString('en-US')} of ${l.prompts.toLocaleString('en-US')} prompts failed` : '', l.cancelled ? `${l.cancelled.toLocaleString('en-US')} cancelled` : ''].filter(Boolean);
  return parts.join(' · ');
}

/** Two medians too close to call a winner (under 2 % apart, or shown the same). */
export function tooClose(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= 0.02 * Math.max(Math.abs(a), Math.abs(b));
}

/**
 * One sentence on what batching did, for the comparison header: the speed-up (the core's, the same
 * number the status bar shows), and never a faster arm without what it lost.
 */
export function verdict(c: ComparisonView): string | null {
  const times = speedup(c.rounds);
  if (times === null) return null;
  const faster: Arm | null = tooClose(times, 1) ? null : times > 1 ? 'batched' : 'individual';
  const lost = (arm: Arm) => {
    const l = armLosses(c, arm);
    return l.failed + l.cancelled ? ` — but it lost prompts (${lossText(l)})` : '';
  };
  if (!faster) return 'Batched and individual took the same wall time (median).';
  const ratio = faster === 'batched' ? times : 1 / times;
  const name = faster === 'batched' ? 'Batched' : 'Individual';
  return `${name} finished ${ratio.toFixed(2)}× faster (median wall time)${lost(faster)}.`;
}

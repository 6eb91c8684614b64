import type { PromptResult } from '../run/result.ts';
import { percentile } from '../run/stats.ts';
import { Timeline, type Span } from './timeline.ts';

/**
 * A latency model of one vLLM server, fitted to a streamed run's timings:
 *
 *   engine step  = stepMs + perSeqMs × running sequences + prefillMsPerToken × prompt tokens it prefills
 *   a request    = overheadMs (HTTP, queueing in the front end) + its prefill step + one step per output token after the first
 *
 * stepMs and perSeqMs come from each request's decode: (done − first token) over its steps, against the mean
 * batch beside it; prefillMsPerToken from the prompt tokens other requests prefilled meanwhile. perSeqMs
 * folds in the cost of each sequence's context at the fitted run's lengths, so predictions hold for runs of
 * about those prompt and answer lengths. maxNumSeqs is the server's, as given (the client cannot see it).
 */
export interface LatencyModel {
  stepMs: number;
  perSeqMs: number;
  prefillMsPerToken: number;
  overheadMs: number;
  maxNumSeqs: number;
  /** The fitted run: its requests' token lengths (cycled by predictions), endpoints, in flight, wall time. */
  lengths: Array<[inTokens: number, outTokens: number]>;
  fittedOn: {
    requests: number;
    endpoints: number;
    /** Most requests open at once across the swarm. */
    inFlight: number;
    wallMs: number;
    /** The 10th and 90th percentile of the batch a request decoded in: the step's split into fixed and per-sequence cost is only seen within it. */
    batchRange: [number, number];
  };
}

export class FitError extends Error {
  override name = 'FitError';
}

/** Fits the model to a run's results; they must be streamed (first-token times) with the servers' token counts. */
export function fitLatencyModel(results: readonly PromptResult[], maxNumSeqs: number): LatencyModel {
  const byEndpoint = new Map<string, Span[]>();
  for (const r of results) {
    const t = r.timings;
    if (!r.ok || !r.endpoint || t.sentMs === null || t.firstTokenMs === null || r.promptTokens === null || r.completionTokens === null) continue;
    let list = byEndpoint.get(r.endpoint);
    if (!list) byEndpoint.set(r.endpoint, (list = []));
    list.push({ sent: t.sentMs, first: t.firstTokenMs, done: t.doneMs, inTokens: r.promptTokens, outTokens: r.completionTokens });
  }
  const spans = [...byEndpoint.values()].flat();
  if (spans.length < 8) throw new FitError(`${spans.length} usable requests: the fit needs at least 8 answered, streamed requests with their token counts (swarm load, or scatter --stream)`);
  const decode: Array<[number, number, number, number]> = [];
  const waits: Array<{ ttft: number; prefilled: number; running: number; warm: boolean }> = [];
  const batches: number[] = [];
  for (const list of byEndpoint.values()) {
    const line = new Timeline(list);
    // Requests open at the endpoint (sent, not yet answered): at most max-num-seqs means none waited for a slot.
    const open = new Timeline(list.map((s) => ({ ...s, first: s.sent })));
    const firstDone = list.reduce((m, s) => Math.min(m, s.done), Infinity);
    for (const s of list) {
      const steps = s.outTokens - 1;
      const batch = line.meanRunning(s.first, s.done);
      if (steps >= 1 && s.done > s.first) {
        decode.push([steps, steps * batch, line.prefilled(s.first, s.done), s.done - s.first]);
        batches.push(batch);
      }
      // The first wave pays for cold connections and a client busy sending them all: it says little of the rest.
      const warm = s.sent >= firstDone;
      if (open.runningAt(s.sent) <= maxNumSeqs) waits.push({ ttft: s.first - s.sent, prefilled: line.prefilled(s.sent, s.first), running: line.runningAt(s.sent) + 1, warm });
    }
  }
  if (decode.length < 3) throw new FitError('too few answers of two or more tokens to fit the decode step');
  batches.sort((x, y) => x - y);
  const batchRange: [number, number] = [percentile(batches, 10), percentile(batches, 90)];
  // A run whose batches hardly varied cannot tell a fixed step from a cost per sequence (the two columns
  // move together): the step is taken as fixed, as a decode step is memory-bound and nearly flat in the
  // batch at small sizes, rather than whichever split the noise favours (a per-sequence cost would predict
  // no gain from more in flight). `swarm plan` warns of it.
  const [stepMs, perSeqMs, prefillMsPerToken] = nonNegativeLeastSquares(decode, batchesVaried(batchRange) ? [0, 1, 2] : [0, 2]);
  // What a request that found a free slot waited beyond its prefill step: the front end and the wire. It
  // arrives, on average, half way through the step under way, then waits for its own (prefill) step; the
  // median over requests, as the typical request pays it. Waits for a slot (requests round-robin under one
  // cap reach a full server while another has room) are left to the prediction, which models them.
  const warm = waits.filter((w) => w.warm);
  const rest = (warm.length ? warm : waits).map((w) => w.ttft - prefillMsPerToken * w.prefilled - 1.5 * (stepMs + perSeqMs * w.running));
  const overheadMs = Math.max(0, rest.length ? percentile(Float64Array.from(rest).sort(), 50) : 0);
  // Reduced, not spread into Math.max: a results file of a million rows would overflow the call stack.
  const wallMs = spans.reduce((m, s) => Math.max(m, s.done), -Infinity) - spans.reduce((m, s) => Math.min(m, s.sent), Infinity);
  return { stepMs, perSeqMs, prefillMsPerToken, overheadMs, maxNumSeqs, lengths: spans.map((s) => [s.inTokens, s.outTokens]), fittedOn: { requests: spans.length, endpoints: byEndpoint.size, inFlight: peak(spans), wallMs, batchRange } };
}

/** The fitted run's batches (10th to 90th percentile) varied enough to split the step into a fixed and a per-sequence part. */
export function batchesVaried([lo, hi]: readonly [number, number]): boolean {
  return hi >= 1.5 * lo;
}

/** Most requests open at once. */
function peak(list: readonly Span[]): number {
  const edges = list.flatMap((s) => [[s.sent, 1], [s.done, -1]] as const).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let n = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (n += d));
  return most;
}

/**
 * y ≈ Σ coef_k x_k with every coef ≥ 0: ordinary least squares over each subset of the `allowed` columns
 * (of three: at most seven subsets), the best fit whose coefficients are all non-negative.
 */
function nonNegativeLeastSquares(rows: ReadonlyArray<readonly [number, number, number, number]>, allowed: readonly number[]): [number, number, number] {
  let best: [number, number, number] = [0, 0, 0];
  let bestErr = Infinity;
  for (let mask = 1; mask < 8; mask++) {
    const cols = [0, 1, 2].filter((k) => mask & (1 << k));
    if (cols.some((k) => !allowed.includes(k))) continue;
    const coef = solve(rows, cols);
    if (!coef || coef.some((c) => c < 0)) continue;
    const full: [number, number, number] = [0, 0, 0];
    cols.forEach((k, i) => (full[k] = coef[i]!));
    let err = 0;
    for (const r of rows) err += (r[3] - full[0] * r[0] - full[1] * r[1] - full[2] * r[2]) ** 2;
    if (err < bestErr) [best, bestErr] = [full, err];
  }
  return best;
}

/** Normal equations over the chosen columns, by Gaussian elimination; null when singular. */
function solve(rows: ReadonlyArray<readonly number[]>, cols: readonly number[]): number[] | null {
  const k = cols.length;
  const a = Array.from({ length: k }, () => new Array<number>(k + 1).fill(0));
  for (const r of rows) {
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < k; j++) a[i]![j]! += r[cols[i]!]! * r[cols[j]!]!;
      a[i]![k]! += r[cols[i]!]! * r[3]!;
    }
  }
  for (let i = 0; i < k; i++) {
    let pivot = i;
    for (let j = i + 1; j < k; j++) if (Math.abs(a[j]![i]!) > Math.abs(a[pivot]![i]!)) pivot = j;
    if (Math.abs(a[pivot]![i]!) < 1e-12) return null;
    [a[i], a[pivot]] = [a[pivot]!, a[i]!];
    for (let j = 0; j < k; j++) {
      if (j === i) continue;
      const f = a[j]![i]! / a[i]![i]!;
      for (let m = i; m <= k; m++) a[j]![m]! -= f * a[i]![m]!;
    }
  }
  return a.map((row, i) => row[k]! / row[i]!);
}

/**
 * One endpoint's streamed requests on a time line, for questions the fit asks of each request: how
 * many sequences were decoding beside it, on average, and how many prompt tokens were prefilled while
 * it waited or decoded. Sorted arrays and prefix sums: n requests cost n log n, not n².
 */
export interface Span {
  sent: number;
  first: number;
  done: number;
  inTokens: number;
  outTokens: number;
}

export class Timeline {
  /** Decode-phase edges (first token: +1, done: −1), sorted, and ∫ running dt up to each edge. */
  private readonly at: Float64Array;
  private readonly level: Float64Array;
  private readonly area: Float64Array;
  /** First-token times, sorted, and the prompt tokens of requests up to each. */
  private readonly firsts: Float64Array;
  private readonly tokensUpTo: Float64Array;

  constructor(spans: readonly Span[]) {
    const edges = spans.flatMap((s) => [[s.first, 1], [s.done, -1]] as const).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    this.at = Float64Array.from(edges, (e) => e[0]);
    this.level = new Float64Array(edges.length);
    this.area = new Float64Array(edges.length);
    let n = 0;
    for (let i = 0; i < edges.length; i++) {
      if (i) this.area[i] = this.area[i - 1]! + n * (this.at[i]! - this.at[i - 1]!);
      n += edges[i]![1];
      this.level[i] = n;
    }
    const byFirst = [...spans].sort((x, y) => x.first - y.first);
    this.firsts = Float64Array.from(byFirst, (s) => s.first);
    this.tokensUpTo = new Float64Array(byFirst.length + 1);
    byFirst.forEach((s, i) => (this.tokensUpTo[i + 1] = this.tokensUpTo[i]! + s.inTokens));
  }

  /** Sequences decoding at time t (after the edges at t). */
  runningAt(t: number): number {
    const i = upperBound(this.at, t) - 1;
    return i < 0 ? 0 : this.level[i]!;
  }

  /** Mean number of sequences decoding over [from, to). */
  meanRunning(from: number, to: number): number {
    if (to <= from) return this.runningAt(from);
    return (this.integral(to) - this.integral(from)) / (to - from);
  }

  /** Prompt tokens of the requests whose first token came in (from, to]: prefilled in that window. */
  prefilled(from: number, to: number): number {
    return this.tokensUpTo[upperBound(this.firsts, to)]! - this.tokensUpTo[upperBound(this.firsts, from)]!;
  }

  private integral(t: number): number {
    const i = upperBound(this.at, t) - 1;
    return i < 0 ? 0 : this.area[i]! + this.level[i]! * (t - this.at[i]!);
  }
}

/** Index of the first value greater than x in sorted `a`. */
function upperBound(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

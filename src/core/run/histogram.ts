/** Buckets per doubling: quantiles come back within ~1 % of the true value. */
const PER_OCTAVE = 64;
/** Values below this (ms) share the first bucket. */
const FLOOR = 1e-3;

/**
 * A log-bucketed histogram of milliseconds: constant memory whatever the count (a million prompts'
 * inter-token gaps), mean exact, quantiles to about 1 %.
 */
export class LogHistogram {
  count = 0;
  private sum = 0;
  private readonly buckets = new Map<number, number>();

  add(ms: number): void {
    const v = ms > FLOOR ? ms : FLOOR;
    const b = Math.round(Math.log2(v / FLOOR) * PER_OCTAVE);
    this.buckets.set(b, (this.buckets.get(b) ?? 0) + 1);
    this.count++;
    this.sum += ms;
  }

  get mean(): number {
    return this.count ? this.sum / this.count : NaN;
  }

  /** The value at quantile `q` (0..1); NaN when empty. */
  quantile(q: number): number {
    if (!this.count) return NaN;
    const rank = q * (this.count - 1);
    let seen = 0;
    for (const b of [...this.buckets.keys()].sort((x, y) => x - y)) {
      seen += this.buckets.get(b)!;
      if (seen > rank) return FLOOR * 2 ** (b / PER_OCTAVE);
    }
    return NaN;
  }
}

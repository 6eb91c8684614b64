/** A Prometheus histogram: cumulative `le` buckets, `_sum` and `_count`. */
export class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = bounds.map(() => 0);
  }

  /** Records `value` `times` times (a sequence's identical inter-token gaps in one call). */
  observe(value: number, times = 1): void {
    if (times <= 0) return;
    this.sum += value * times;
    this.count += times;
    const i = this.bounds.findIndex((b) => value <= b);
    if (i >= 0) this.counts[i]! += times;
  }

  /** `[le, cumulative count]` per bucket, `+Inf` last, then sum and count. */
  samples(): { buckets: Array<[string, number]>; sum: number; count: number } {
    let running = 0;
    const buckets = this.bounds.map((b, i): [string, number] => [numberText(b), (running += this.counts[i]!)]);
    buckets.push(['+Inf', this.count]);
    return { buckets, sum: this.sum, count: this.count };
  }
}

/** Python's prometheus_client prints floats: `3.0`, `0.25`. */
export function numberText(value: number): string {
  return Number.isInteger(value) ? value.toFixed(1) : String(value);
}

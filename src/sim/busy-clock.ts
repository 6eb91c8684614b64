/** A sequence's modeled run: [start, end) in performance.now() milliseconds. */
export interface Interval {
  start: number;
  end: number;
}

/**
 * Measures the union of modeled sequence intervals: the time a server "would have been busy"
 * with no event-loop lag, the basis of ideal-makespan comparisons. Intervals open in time
 * order, so the union is kept as closed busy periods plus the current one.
 */
export class BusyClock {
  private readonly live = new Set<Interval>();
  private closedMs = 0;
  private from = 0;
  private until = 0;
  /** Latest end among intervals of the current period that are no longer live. */
  private settled = 0;

  open(now: number, durationMs: number): Interval {
    if (now >= this.until) {
      this.closedMs += this.until - this.from;
      this.from = this.until = this.settled = now;
    }
    const interval = { start: now, end: now + durationMs };
    this.live.add(interval);
    this.until = Math.max(this.until, interval.end);
    return interval;
  }

  /** Closes an interval; one cut short (cancelled sequence) ends at `now` instead of its modeled end. */
  close(interval: Interval, now: number): void {
    this.live.delete(interval);
    if (now < interval.end) {
      interval.end = now;
      this.until = Math.max(this.settled, now);
      for (const other of this.live) this.until = Math.max(this.until, other.end);
    }
    this.settled = Math.max(this.settled, interval.end);
  }

  busyMs(now: number): number {
    return this.closedMs + Math.max(0, Math.min(now, this.until) - this.from);
  }
}

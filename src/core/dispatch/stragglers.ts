import { LogHistogram } from '../run/histogram.ts';
import type { PoolOptions } from '../pool/options.ts';
import type { RunContext } from '../run/run.ts';

/** What the straggler rules look at of a request in flight. */
export interface InFlight {
  startedAt: number;
  /** `performance.now()` of the headers or the latest streamed event. */
  lastActivity: number;
  /** A token has arrived. */
  tokens: boolean;
  /** Streamed: the inter-token gaps seen on this request (each prompt's own), their sum in ms. */
  gaps: number;
  gapMs: number;
}

/** Gaps a stream must show before its pace is judged: a few tokens per prompt, not one hiccup. */
const PACE_SAMPLES = 16;

/** Request durations kept for the typical one (a ring: recent requests speak for the endpoints now). */
const DURATION_SAMPLES = 256;

/**
 * Tells hung requests from slow ones by what the run has seen so far. A stream is stalled when no
 * event came for the larger of `stallTimeoutMs` and 20× the worst inter-token gaps seen (p99), or,
 * before its first token, 3× the run's p90 time to first token (queues in front of a busy server
 * are normal). A request is overdue — worth hedging — when it has taken `hedgeFactor` times the
 * run's median request, and at least `hedgeMinMs`. A stream is lagging — worth hedging once others
 * are idle, with no floor — when its tokens come `hedgeFactor` times slower than the run's mean gap:
 * a slow endpoint's list then no longer sets the makespan of a streamed batch run.
 */
export class Stragglers {
  private readonly ttft = new LogHistogram();
  private readonly durations: number[] = [];
  private next = 0;

  constructor(
    private readonly options: Pick<PoolOptions, 'stallTimeoutMs' | 'hedgeFactor' | 'hedgeMinMs' | 'timeoutMs'>,
    private readonly ctx: Pick<RunContext, 'gaps'>,
    private readonly streamed: boolean,
  ) {}

  gap(ms: number): void {
    this.ctx.gaps.add(ms);
  }

  firstToken(ms: number): void {
    this.ttft.add(ms);
  }

  took(ms: number): void {
    this.durations[this.next] = ms;
    this.next = (this.next + 1) % DURATION_SAMPLES;
  }

  /** Why a streamed request counts as stalled now, or null. */
  stalled(r: InFlight, now: number): string | null {
    if (!this.streamed) return null;
    const quiet = now - r.lastActivity;
    const gaps = this.ctx.gaps;
    const limit = r.tokens
      ? Math.max(this.options.stallTimeoutMs, gaps.count ? 20 * gaps.quantile(0.99) : 0)
      : Math.max(this.options.stallTimeoutMs, this.ttft.count ? 3 * this.ttft.quantile(0.9) : this.options.timeoutMs);
    if (quiet <= limit) return null;
    return `stalled: no ${r.tokens ? 'token' : 'first token'} for ${(quiet / 1000).toFixed(1)} s`;
  }

  /**
   * The run's mean inter-token gap times `hedgeFactor`: streams slower than this lag (Infinity until
   * known). The mean, not the median: deltas arrive in bursts (a server's step writes many sequences
   * at once, a busy client reads them late), so most gaps are near zero and the median says nothing of
   * the pace — against it, every healthy stream looked thousands of times slower and was hedged.
   */
  lagAfter(): number {
    const gaps = this.ctx.gaps;
    return this.streamed && gaps.count >= PACE_SAMPLES ? this.options.hedgeFactor * gaps.mean : Infinity;
  }

  /** Whether a stream's own tokens come slower than `lagAfter` allows. */
  static lagging(r: InFlight, lagAfter: number): boolean {
    return r.gaps >= PACE_SAMPLES && r.gapMs / r.gaps > lagAfter;
  }

  /** How long a request may take before it is overdue (Infinity until a request finished), for one patrol. */
  overdueAfter(): number {
    if (!this.durations.length) return Infinity;
    const sorted = Float64Array.from(this.durations).sort();
    return Math.max(this.options.hedgeMinMs, this.options.hedgeFactor * sorted[sorted.length >> 1]!);
  }
}

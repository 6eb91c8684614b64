/** How long an endpoint that failed sits out before a real generation request may test it again. */
export interface CoolDown {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_COOL_DOWN: CoolDown = { baseMs: 2_000, maxMs: 30_000 };

/**
 * One endpoint's circuit breaker. A failure benches it (open) for a cool-down that doubles with
 * each failure in a row; after the cool-down one request may go through (half-open) — a real
 * generation request, since a sick vLLM can still answer `/health` — and its outcome closes the
 * breaker or benches the endpoint again. A refused key or an unverifiable certificate benches it for
 * the breaker's life: never probed again (a refused key retried is how accounts get locked), not even
 * after an answer to a request sent before the refusal.
 */
export class Breaker {
  private failures = 0;
  private openUntil = 0;
  private probing = false;
  private permanent = false;

  constructor(private readonly coolDown: CoolDown) {}

  /** `yes`: take requests; `probe`: one request may test it now; `no`: benched. */
  admits(now: number): 'yes' | 'probe' | 'no' {
    if (this.permanent) return 'no';
    if (this.failures === 0) return 'yes';
    return !this.probing && now >= this.openUntil ? 'probe' : 'no';
  }

  /** When a benched endpoint may next be probed (ms, `performance.now()` clock). */
  get reopensAt(): number {
    return this.permanent ? Infinity : this.openUntil;
  }

  startProbe(): void {
    this.probing = true;
  }

  /** The endpoint answered: closed again, unless it is benched for good (then false). */
  succeeded(): boolean {
    this.failures = 0;
    this.probing = false;
    return !this.permanent;
  }

  /** Benched: by a run's failed request (`permanent`: a refused key, a certificate), or by a check from outside a run. */
  failed(now: number, permanent = false): void {
    this.failures++;
    this.probing = false;
    this.permanent ||= permanent;
    this.openUntil = now + Math.min(this.coolDown.maxMs, this.coolDown.baseMs * 2 ** (this.failures - 1));
  }

  /** A probe that ended without a verdict (cancelled, lost a hedge) frees the half-open slot. */
  abandonProbe(): void {
    this.probing = false;
  }
}

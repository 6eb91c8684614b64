import { setTimeout as sleep } from 'node:timers/promises';
import { RequestFailure } from '../http/failure.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** No new attempt starts once this much time has passed since the first one. */
  budgetMs: number;
  /** Connection refused means down, not busy (notes §1.11.10): one quick retry, then give up. */
  refusedRetryDelayMs: number;
  /**
   * Quick retries after a refused connection (default 1). A lookup takes none: nothing listening is
   * a server not yet up (vLLM listens only once its engine is ready, minutes later), and the retry
   * doubled the sockets of a start where thousands of endpoints refuse.
   */
  refusedRetries?: number;
  /** Timeouts are tried again too: a lookup has no other endpoint to ask (a run's requests fail over instead). */
  retryTimeouts?: boolean;
  /** Every failure is tried again, not only transient ones: a tunnel reconnects until it is closed. */
  retryAll?: boolean;
  /** Backoff without jitter: the delay is told to the user ("next try in 4 s"). */
  exact?: boolean;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  budgetMs: 60_000,
  refusedRetryDelayMs: 250,
};

/** A tunnel's reconnect loop: 1, 2, 4, 8, 16, then every 30 s, until the tunnel closes. */
export const RECONNECT_RETRY: RetryPolicy = {
  maxAttempts: Infinity,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  budgetMs: Infinity,
  refusedRetryDelayMs: 1_000,
  retryAll: true,
  exact: true,
};

/** Where a failing operation stands: attempts made (the failed one included), refused connections among them, when the first began (`performance.now()`). */
export interface RetryTally {
  attempts: number;
  refusals: number;
  startedAt: number;
}

/**
 * The one retry decision of the pool's lookups, the dispatcher and the tunnels: how long to wait
 * before another attempt after `failure`, or null to stop (not transient, out of attempts, a second
 * refused connection, or past the budget). The wait is what the server asked for (`Retry-After` on
 * a 429 or 503), a quick retry for a refused connection, else backoff (retryDelay).
 */
export function nextRetry(failure: RequestFailure, tally: RetryTally, policy: RetryPolicy, now: number = performance.now()): number | null {
  const transient = policy.retryAll || failure.retryable || (policy.retryTimeouts && failure.kind === 'timeout');
  if (!transient || tally.attempts >= policy.maxAttempts) return null;
  if (!policy.retryAll && failure.kind === 'refused' && tally.refusals > (policy.refusedRetries ?? 1)) return null;
  const delay = retryDelay(failure, tally.attempts, policy);
  return now - tally.startedAt + delay > policy.budgetMs ? null : delay;
}

/** The wait before attempt `attempt + 1`: what the server asked for, a quick retry for a refused connection, else backoff. */
function retryDelay(failure: RequestFailure, attempt: number, policy: RetryPolicy): number {
  return failure.retryAfterMs ?? (failure.kind === 'refused' ? policy.refusedRetryDelayMs : backoffDelay(attempt, policy));
}

/** Exponential backoff with full jitter: uniform in [0, min(max, base·2^(attempt-1))] (exact: the bound itself). */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const bound = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return policy.exact ? bound : random() * bound;
}

/**
 * Runs `attempt(n)` until it succeeds or `nextRetry` says stop (or `signal` aborts).
 * Returns the value and how many attempts it took; a final failure carries `attempts` too.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  attempt: (n: number) => Promise<T>,
): Promise<{ value: T; attempts: number }> {
  const tally: RetryTally = { attempts: 0, refusals: 0, startedAt: performance.now() };
  for (;;) {
    tally.attempts++;
    try {
      return { value: await attempt(tally.attempts), attempts: tally.attempts };
    } catch (err) {
      const failure = RequestFailure.from(err);
      if (failure.kind === 'refused') tally.refusals++;
      const delay = signal.aborted ? null : nextRetry(failure, tally, policy);
      if (delay === null) throw Object.assign(failure, { attempts: tally.attempts });
      try {
        await sleep(delay, undefined, { signal });
      } catch {
        throw Object.assign(new RequestFailure('cancelled', 'cancelled'), { attempts: tally.attempts });
      }
    }
  }
}

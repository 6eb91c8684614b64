import { setTimeout as sleep } from 'node:timers/promises';
import { RequestFailure } from './http/failure.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** No new attempt starts once this much time has passed since the first one. */
  budgetMs: number;
  /** Connection refused means down, not busy (notes §1.11.10): one quick retry, then give up. */
  refusedRetryDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  budgetMs: 60_000,
  refusedRetryDelayMs: 250,
};

/**
 * How long to wait before attempt `attempt + 1` after this failure: what the server asked for
 * (`Retry-After` on a 429 or 503), a quick retry for a refused connection, else backoff. The one
 * decision of the pool's lookups and the dispatcher alike.
 */
export function retryDelay(failure: RequestFailure, attempt: number, policy: RetryPolicy): number {
  if (failure.retryAfterMs !== undefined) return failure.retryAfterMs;
  return failure.kind === 'refused' ? policy.refusedRetryDelayMs : backoffDelay(attempt, policy);
}

/** Exponential backoff with full jitter: uniform in [0, min(max, base·2^(attempt-1))]. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  return random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
}

/**
 * Runs `attempt(n)` until it succeeds, the failure is not transient, or the policy says stop.
 * Returns the value and how many attempts it took; a final failure carries `attempts` too.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  attempt: (n: number) => Promise<T>,
): Promise<{ value: T; attempts: number }> {
  const started = Date.now();
  let refusals = 0;
  for (let n = 1; ; n++) {
    try {
      return { value: await attempt(n), attempts: n };
    } catch (err) {
      const failure = RequestFailure.from(err);
      if (failure.kind === 'refused') refusals++;
      const delay = retryDelay(failure, n, policy);
      const giveUp =
        !(failure.retryable || failure.kind === 'timeout') ||
        signal.aborted ||
        n >= policy.maxAttempts ||
        refusals > 1 ||
        Date.now() - started + delay > policy.budgetMs;
      if (giveUp) throw Object.assign(failure, { attempts: n });
      try {
        await sleep(delay, undefined, { signal });
      } catch {
        throw Object.assign(new RequestFailure('cancelled', 'cancelled'), { attempts: n });
      }
    }
  }
}

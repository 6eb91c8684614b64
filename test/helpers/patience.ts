import { availableParallelism, loadavg } from 'node:os';

/**
 * A test's time limits are hang guards, not measurements: on a machine whose cores are shared (a
 * second test run beside this one, CI neighbours) a child that is ready in 1 s idle takes ten. Every
 * limit is therefore stretched by how oversubscribed the machine is now — the 1-minute load average
 * over the cores, at least 1 — read when the wait starts.
 */
export function patience(ms: number): number {
  return Math.round(ms * Math.max(1, loadavg()[0]! / availableParallelism()));
}

export interface PollOptions<T> {
  /** Whether a value is the one waited for (default: anything but undefined, null or false). */
  ready?: (value: T) => boolean;
  intervalMs?: number;
}

const present = (v: unknown) => v !== undefined && v !== null && v !== false;

/**
 * Polls `probe` until it gives a value that is `ready`, every `intervalMs` (25); rejects naming
 * `what` once `timeoutMs` (stretched by patience) has passed. The one polling loop of the tests:
 * every wait for a condition goes through it.
 */
export async function until<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 15_000, options: PollOptions<T> = {}): Promise<Exclude<T, undefined | null | false>> {
  const ready = options.ready ?? present;
  const deadline = Date.now() + patience(timeoutMs);
  for (;;) {
    const value = await probe();
    if (ready(value)) return value as Exclude<T, undefined | null | false>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 25));
  }
}

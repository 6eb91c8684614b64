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
  /**
   * A probe that has not answered after this long (stretched by patience) counts as "not yet" and the
   * next one is asked: for probes that can hang rather than fail (an evaluate in a webview frame that
   * is being remade never returns). Without it, a slow probe may answer past the deadline (its answer
   * counts), and one silent for HUNG_PROBE_MS past it ends the wait.
   */
  probeTimeoutMs?: number;
}

const present = (v: unknown) => v !== undefined && v !== null && v !== false;
const NO_ANSWER = Symbol('no answer');
/** How long past its deadline a wait gives a probe that has not answered yet (stretched by patience). */
const HUNG_PROBE_MS = 30_000;

/** `value`, or NO_ANSWER if it has not settled within `ms` (a late rejection is dropped). */
function within<T>(value: T | Promise<T>, ms: number): Promise<T | typeof NO_ANSWER> {
  if (!(value instanceof Promise)) return Promise.resolve(value);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof NO_ANSWER>((r) => (timer = setTimeout(() => r(NO_ANSWER), Math.max(0, ms))));
  value.catch(() => {});
  return Promise.race([value, late]).finally(() => clearTimeout(timer));
}

/**
 * Polls `probe` until it gives a value that is `ready`, every `intervalMs` (25); rejects naming
 * `what` once `timeoutMs` (stretched by patience) has passed. The one polling loop of the tests:
 * every wait for a condition goes through it. A probe that hangs cannot hold it for good.
 */
export async function until<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 15_000, options: PollOptions<T> = {}): Promise<Exclude<T, undefined | null | false>> {
  const ready = options.ready ?? present;
  const deadline = Date.now() + patience(timeoutMs);
  const ownLimit = options.probeTimeoutMs === undefined ? undefined : patience(options.probeTimeoutMs);
  for (;;) {
    const value = await within(probe(), ownLimit ?? Math.max(deadline - Date.now(), patience(HUNG_PROBE_MS)));
    if (value !== NO_ANSWER && ready(value)) return value as Exclude<T, undefined | null | false>;
    if (Date.now() >= deadline) throw new Error(`timed out waiting for ${what}${value === NO_ANSWER ? ' (its last probe had not answered)' : ''}`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 25));
  }
}

import { until as poll } from '../helpers/patience.ts';

/** Polls `probe` every 25 ms until it gives something truthy (returned), or throws after `timeoutMs` (stretched on a loaded machine). */
export function until<T>(probe: () => T | undefined | false, what: string, timeoutMs = 15_000): Promise<T> {
  return poll(probe, what, timeoutMs, { ready: (v) => Boolean(v) }) as Promise<T>;
}

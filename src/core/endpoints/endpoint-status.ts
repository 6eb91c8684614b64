import type { EndpointHealth } from '../pool/endpoint-states.ts';

/**
 * The one status vocabulary every view of an endpoint shows (tree, status bar, panel): the pool's
 * health, `booting` for an endpoint not answering yet while the user waits for servers to come up,
 * and `excluded` for one the user took out of runs.
 */
export type EndpointStatus = EndpointHealth | 'booting' | 'excluded';

/** How every view names each status: the CLI's tables, the tree, the status bar, the log and the panel. */
export const STATUS_LABELS: Record<EndpointStatus, string> = {
  up: 'healthy',
  booting: 'booting',
  degraded: 'degraded',
  down: 'down',
  'tunnel-down': 'tunnel down',
  unknown: 'checking…',
  excluded: 'excluded',
};

/** Worst first: the order a "by status" sort and the summary row use. */
export const STATUS_ORDER: readonly EndpointStatus[] = ['down', 'tunnel-down', 'degraded', 'booting', 'unknown', 'excluded', 'up'];

/**
 * What a view shows for the pool's health: `excluded` above all (the user took it out of runs), and
 * not answering reads `booting` only while someone waits for it.
 */
export function viewStatus(health: EndpointHealth, waiting: boolean, excluded = false): EndpointStatus {
  if (excluded) return 'excluded';
  return waiting && (health === 'down' || health === 'unknown') ? 'booting' : health;
}

/** Share of an endpoint's requests that failed, from what runs counted; null before any. */
export function failureRate(counts: { answered: number; failures: number }): number | null {
  const total = counts.answered + counts.failures;
  return total ? counts.failures / total : null;
}

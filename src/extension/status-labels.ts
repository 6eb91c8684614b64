import type { EndpointStatus } from '../core/endpoint-status.ts';

/** How the tree, the status bar and the log name each endpoint status. */
export const STATUS_LABELS: Record<EndpointStatus, string> = {
  up: 'healthy',
  booting: 'booting',
  degraded: 'degraded',
  down: 'down',
  'tunnel-down': 'tunnel down',
  unknown: 'checking…',
  excluded: 'excluded',
};

/**
 * How much of the swarm a run would reach, from the endpoints' one status (the pool's, as the host
 * sends it): shown in the top bar, in Compose, and as a warning before Run when some are down.
 */
import type { EndpointInfo } from '../../src/panel/protocol.ts';
import { matchingEndpoints } from './compose.ts';

/** Statuses of endpoints a run cannot reach (excluded ones are the user's choice, not a failure). */
const UNREACHABLE = new Set(['down', 'tunnel-down']);

export interface SwarmHealth {
  /** Endpoints the run may use: carrying the chosen tags, not excluded. */
  chosen: number;
  /** Of those, the ones down or behind a broken tunnel, by id. */
  down: string[];
}

export function swarmHealth(endpoints: readonly EndpointInfo[], tags: readonly string[]): SwarmHealth {
  const chosen = matchingEndpoints(endpoints, tags).filter((e) => e.status !== 'excluded');
  return { chosen: chosen.length, down: chosen.filter((e) => UNREACHABLE.has(e.status)).map((e) => e.id) };
}

/** What to say before Run when the run would reach fewer endpoints than it may use; null when all are up. */
export function healthWarning(h: SwarmHealth): string | null {
  if (!h.chosen || !h.down.length) return null;
  if (h.down.length === h.chosen) return `All ${h.chosen === 1 ? 'the endpoint is' : `${h.chosen} endpoints are`} down: every prompt will fail.`;
  const named = h.down.slice(0, 3).join(', ') + (h.down.length > 3 ? ` and ${h.down.length - 3} more` : '');
  return `${h.down.length} of ${h.chosen} endpoints are down (${named}): the other ${h.chosen - h.down.length} get their prompts.`;
}

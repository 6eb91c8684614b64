import type { EndpointHealthReport } from './health.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';

/** Reasons a health check wrote start with this, so a later healthy check knows it may clear them. */
const CHECKED = 'health check: ';

/**
 * Writes a round of health checks into the pool's endpoint states, the one model of endpoint
 * health that runs write too. Refused, reset or timed out: `down`; `/health` answering an error:
 * `degraded`; route gone: `tunnel-down`. A healthy check brings back an endpoint that was down or
 * unknown (its models are looked up afresh) but not one a run found failing: a sick vLLM still
 * answers `/health`, so only a generation request that goes through clears that.
 */
export function recordHealth(pool: SwarmPool, reports: readonly EndpointHealthReport[]): void {
  reports.forEach((report, i) => {
    const state = pool.endpoints[i]!;
    if (report.status === 'up') {
      const mayClear = state.status !== 'up' && (state.status !== 'degraded' || state.reason?.startsWith(CHECKED));
      if (!mayClear) return;
      if (state.status !== 'degraded') pool.forget([state.slot]);
      pool.healed(state.slot);
      return;
    }
    pool.markDown(state.slot, { status: report.status, reason: `${CHECKED}${report.error ?? report.status}` });
  });
}

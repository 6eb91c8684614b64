import { RequestFailure } from '../http/failure.ts';
import { parseModelList, servedModels, type ServedModel } from './models.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { EndpointHealth } from '../pool/endpoint-states.ts';

/** What one check can find: the pool's health, never `unknown` (a check is what makes it known). */
export type CheckedHealth = Exclude<EndpointHealth, 'unknown'>;

export interface EndpointHealthReport {
  endpoint: string;
  status: CheckedHealth;
  /** Status of `GET /health`; null when it could not be asked (or the server has none: 404). */
  healthStatus: number | null;
  /** Round trip of `GET /health` (or of `/v1/models` when there is no `/health`). */
  latencyMs: number | null;
  models: ServedModel[];
  error: string | null;
  /** 401 or 403 when the server refused our credentials on `/v1/models`: no wait makes it healthy. */
  denied: number | null;
}

const isDenied = (status: number | null | undefined): status is number => status === 401 || status === 403;

/**
 * Asks every endpoint `GET /health` and `GET /v1/models` (HTTP, not a TCP probe: a tunnel's
 * forward accepts connections even when vLLM is down). Servers without `/health` (older vLLM,
 * other OpenAI-compatible services) count as healthy when `/v1/models` answers. An endpoint whose
 * key was refused is asked nothing more (its client says so unsent).
 */
export function checkHealth(pool: SwarmPool, signal?: AbortSignal): Promise<EndpointHealthReport[]> {
  const timeout = pool.options.lookupTimeoutMs;
  return Promise.all(
    pool.endpoints.map(async (state): Promise<EndpointHealthReport> => {
      const report: EndpointHealthReport = { endpoint: state.id, status: 'down', healthStatus: null, latencyMs: null, models: [], error: null, denied: null };
      try {
        const health = await pool.get(state.slot, '/health', timeout, signal);
        // No /health (404), or a gateway's that wants what we may not have (401, 403; vLLM's own asks no key): /v1/models tells.
        const hasHealth = health.status !== 404 && !isDenied(health.status);
        if (hasHealth) {
          report.healthStatus = health.status;
          report.latencyMs = health.firstByteAt - health.sentAt;
        }
        const models = await pool.getJson(state.slot, '/v1/models', timeout, signal);
        report.models = servedModels(state.endpoint, parseModelList(models.body))!;
        report.latencyMs ??= models.firstByteAt - models.sentAt;
        report.status = !hasHealth || (health.status >= 200 && health.status < 300) ? 'up' : 'degraded';
        if (report.status === 'degraded') report.error = `/health answered ${health.status}`;
      } catch (err) {
        const failure = err instanceof RequestFailure ? err : new RequestFailure('protocol', (err as Error).message);
        report.status = failure.kind === 'tunnel' ? 'tunnel-down' : failure.endpointDown || failure.kind === 'timeout' ? 'down' : 'degraded';
        report.error = failure.message;
        if (isDenied(failure.status)) report.denied = failure.status;
      }
      return report;
    }),
  );
}

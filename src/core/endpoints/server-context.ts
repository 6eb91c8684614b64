import { rename, rm, writeFile } from 'node:fs/promises';
import type { Meter } from '../http/request-meter.ts';
import type { ServedModel } from './models.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { EndpointHealth } from '../pool/endpoint-states.ts';

/** What one endpoint said of itself during a run: results read later say what answered them. */
export interface ServerContext {
  endpoint: string;
  status: EndpointHealth;
  /** `GET /version`; null where the server does not say (older vLLM, most services). */
  version: string | null;
  /** From `/v1/models` (or a line's `model=`), each with its `max_model_len`; null when never looked up or not told. */
  models: ServedModel[] | null;
  /** Why it is not up, when it is not. */
  reason: string | null;
}

/** Asks every endpoint that is up its `GET /version` (once per endpoint for the pool's life), each request counted by `meter` (the run it goes with). */
export function askVersions(pool: SwarmPool, meter?: Meter): Promise<Array<string | null>> {
  // Only endpoints that answered their model lookup (the run's own, shared): 9,990 down ones of 10,000
  // would each cost a refused request, and a connection pool made again after it was let go.
  return Promise.all(
    pool.endpoints.map(async (s) => {
      await pool.lookupModels(s.slot, meter);
      return s.status === 'up' ? pool.version(s.slot, meter) : null;
    }),
  );
}

/** Every endpoint of the pool as it is now, with the versions askVersions got (in the pool's endpoint order). */
export function serverContext(pool: SwarmPool, versions: ReadonlyArray<string | null>): ServerContext[] {
  return pool.endpoints.map((s, i) => ({ endpoint: s.id, status: s.status, version: versions[i] ?? null, models: s.models, reason: s.reason }));
}

/** `<results>.servers.json`, where a run's server context is written beside its results. */
export const serversFileOf = (results: string) => `${results}.servers.json`;

/** Writes the context beside the results file, whole or not at all (a temporary file renamed over it). */
export async function writeServerContext(results: string, context: readonly ServerContext[]): Promise<void> {
  const path = serversFileOf(results);
  try {
    await writeFile(`${path}.tmp`, `${JSON.stringify(context, null, 2)}\n`);
    await rename(`${path}.tmp`, path);
  } catch (err) {
    await rm(`${path}.tmp`, { force: true }).catch(() => undefined); // a full disk leaves no half file behind
    throw err;
  }
}

import type { Endpoint } from '../core/endpoints/endpoint.ts';
import type { InferenceBackend } from './backend.ts';
import type { SimOptions } from './options.ts';
import { SimServer } from './server.ts';

export interface SimCluster {
  servers: SimServer[];
  endpoints: Endpoint[];
  close(): Promise<void>;
}

/**
 * Starts `count` identical simulated servers on free ports, or on `firstPort` … `firstPort + count - 1`,
 * each with its backend if given (real inference); if one fails to start, the rest are closed.
 */
export async function startSimCluster(count: number, options: Partial<SimOptions> = {}, firstPort = 0, backends: readonly InferenceBackend[] = []): Promise<SimCluster> {
  const servers = Array.from({ length: count }, (_, i) => new SimServer(options, backends[i]));
  const close = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.close()));
  };
  const started = await Promise.allSettled(servers.map((s, i) => s.start(firstPort && firstPort + i)));
  const failure = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) {
    await close();
    throw failure.reason;
  }
  return { servers, endpoints: servers.map((s) => s.endpoint), close };
}

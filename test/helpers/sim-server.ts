import { SimServer, type SimOptions } from '../../src/sim/index.ts';

/** Zero latency unless a test is about latency, so the suites stay fast. */
export const FAST: Partial<SimOptions> = { ttftMs: 0, tpotMs: 0, requestOverheadMs: 0 };

/** One simulated server on loopback for the length of `fn` (FAST unless `options` say otherwise). */
export async function withServer<T>(options: Partial<SimOptions>, fn: (server: SimServer, origin: string) => Promise<T>): Promise<T> {
  const server = new SimServer({ ...FAST, ...options });
  await server.start();
  try {
    return await fn(server, `http://127.0.0.1:${server.port}`);
  } finally {
    await server.close();
  }
}

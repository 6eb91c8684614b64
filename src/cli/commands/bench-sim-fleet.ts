import type { Endpoint } from '../../core/index.ts';
import type { SimStats } from '../../sim/server.ts';
import { startSimProcess, type SimProcess } from './bench-sim.ts';
import { procCpuMs } from './bench-process.ts';

/** Many simulated ports served by several `swarm sim` processes, so one event loop is not the bottleneck. */
export interface SimFleet {
  processes: SimProcess[];
  endpoints: Endpoint[];
  /** Every server's stats, in endpoint order. */
  servers(): Promise<SimStats[]>;
  /** CPU each process has used so far, ms. */
  cpuMs(): number[];
  stop(): Promise<void>;
}

/** `endpoints` ports split evenly over `processes` simulator processes (never more processes than ports). */
export async function startSimFleet(endpoints: number, processes: number, flags: readonly string[]): Promise<SimFleet> {
  const k = Math.min(processes, endpoints);
  const sizes = Array.from({ length: k }, (_, i) => Math.floor(endpoints / k) + (i < endpoints % k ? 1 : 0));
  const started = await Promise.allSettled(sizes.map((n) => startSimProcess(n, flags)));
  const procs = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stop = async () => {
    await Promise.all(procs.map((p) => p.stop()));
  };
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return {
    processes: procs,
    endpoints: procs.flatMap((p) => p.endpoints),
    servers: async () => (await Promise.all(procs.map((p) => p.stats()))).flatMap((s) => s.servers),
    cpuMs: () => procs.map((p) => procCpuMs(p.child.pid!)),
    stop,
  };
}

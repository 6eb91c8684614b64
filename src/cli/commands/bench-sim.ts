import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { childEnv, parseHostfile, type Endpoint } from '../../core/index.ts';
import type { SimIpcMessage } from './sim.ts';

/** How a bench section prints a line of its report. */
export type Say = (line?: string) => void;
export type StartSim = (endpoints: number, flags?: readonly string[]) => Promise<SimProcess>;

/** Settings under which wall / ideal means something: a served model's pace, answers ending at EOS, Aurora-Swarm's concurrency. */
export const REAL = { overheadMs: 2, ttftMs: 200, tpotMs: 20, maxTokens: 128, maxNumSeqs: 256, concurrency: 512 };
const SIM = { overheadMs: REAL.overheadMs, ttftMs: REAL.ttftMs, tpotMs: REAL.tpotMs };

export interface SimProcess {
  child: ChildProcess;
  endpoints: Endpoint[];
  stats(): Promise<Extract<SimIpcMessage, { type: 'stats' }>>;
  stop(): Promise<void>;
}

/** `swarm sim` in a child process (lorem replies, the bench's latency unless `flags` say otherwise). */
export async function startSimProcess(endpoints: number, flags: readonly string[] = []): Promise<SimProcess> {
  const args = ['sim', '--endpoints', String(endpoints), '--reply', 'lorem', '--request-overhead-ms', String(SIM.overheadMs), '--ttft-ms', String(SIM.ttftMs), '--tpot-ms', String(SIM.tpotMs), ...flags];
  // The simulator needs no key of ours: it gets only what any child of ours may see.
  const child: ChildProcess = fork(process.argv[1]!, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: childEnv() });
  const [ready] = (await once(child, 'message')) as [SimIpcMessage];
  if (ready.type !== 'ready') throw new Error('simulator did not report ready');
  const endpointList = parseHostfile(ready.endpoints.join('\n')).endpoints;
  return {
    child,
    endpoints: endpointList,
    stats: async () => {
      child.send({ type: 'stats' });
      const [m] = (await once(child, 'message')) as [SimIpcMessage];
      if (m.type !== 'stats') throw new Error('unexpected message from simulator');
      return m;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

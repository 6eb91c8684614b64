/**
 * A simulated cluster on a worker thread of its own, for a host whose thread has other work: the
 * editor's extension host serves every extension's API and the panel's messages on one thread, and
 * 1,000 simulated servers answering there held the panel's messages back by seconds (a real cluster's
 * servers are elsewhere). The servers are the same as `startSimCluster`'s; only where they run differs.
 */
import { Worker } from 'node:worker_threads';
import type { Endpoint } from '../core/endpoints/endpoint.ts';
import type { SimOptions } from './options.ts';

export interface ThreadedSimCluster {
  endpoints: Endpoint[];
  /** Stops every server and ends the thread. */
  close(): Promise<void>;
}

/** What the thread is told at its start (workerData), and what it answers. */
export interface ClusterThreadStart {
  count: number;
  options: Partial<SimOptions>;
}
export type ClusterThreadReply = { type: 'started'; endpoints: Endpoint[] } | { type: 'failed'; error: string } | { type: 'closed' };

/**
 * Starts `count` simulated servers on `script`'s thread (the bundled sim/cluster-worker.ts); rejects
 * with the thread's own error when they cannot start, the thread ended.
 */
export function startSimClusterThread(script: string, count: number, options: Partial<SimOptions> = {}): Promise<ThreadedSimCluster> {
  const worker = new Worker(script, { workerData: { count, options } satisfies ClusterThreadStart });
  const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const close = async (): Promise<void> => {
    worker.postMessage('close');
    // A thread that does not close its servers in time is ended: Disconnect must not hang on it.
    const timer = setTimeout(() => void worker.terminate(), 10_000);
    await ended;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the simulator's thread ended (exit ${code}) before its servers started`)));
    worker.once('message', (reply: ClusterThreadReply) => {
      if (reply.type === 'started') resolve({ endpoints: reply.endpoints, close });
      else reject(new Error(reply.type === 'failed' ? reply.error : 'the simulator closed before it started'));
    });
  });
}

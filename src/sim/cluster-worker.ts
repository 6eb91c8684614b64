/**
 * The simulator's thread (see cluster-thread.ts), bundled on its own as dist/sim-worker.cjs: starts
 * the cluster it is told to, says its endpoints, and closes it when told to, then ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startSimCluster } from './cluster.ts';
import type { ClusterThreadReply, ClusterThreadStart } from './cluster-thread.ts';

const port = parentPort!;
const say = (reply: ClusterThreadReply) => port.postMessage(reply);
const { count, options } = workerData as ClusterThreadStart;

// An async function, not top-level await: the thread is bundled as CommonJS.
void (async () => {
  try {
    const cluster = await startSimCluster(count, options);
    port.on('message', (m) => {
      if (m !== 'close') return;
      void cluster.close().then(() => {
        say({ type: 'closed' });
        port.close();
      });
    });
    say({ type: 'started', endpoints: cluster.endpoints });
  } catch (err) {
    say({ type: 'failed', error: (err as Error).message });
    port.close();
  }
})();

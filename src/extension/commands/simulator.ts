import * as vscode from 'vscode';
import { writeHostfile } from '../../core/index.ts';
import { join } from 'node:path';
import { startSimClusterThread } from '../../sim/cluster-thread.ts';
import type { Services } from '../services.ts';

/**
 * `Swarm: Start Local Simulator`: N simulated vLLM servers in the extension host's process, on a
 * thread of their own (pure JavaScript, no child process; off the thread that serves the editor and
 * the panel), their hostfile written to `.swarm/`, connected directly. They stop on Disconnect.
 * Anyone can try everything with no cluster.
 */
export async function startSimulator(services: Services, args: { count?: number } = {}): Promise<boolean> {
  const answer =
    args.count?.toString() ??
    (await vscode.window.showInputBox({
      title: 'Swarm: Start Local Simulator',
      prompt: 'How many simulated vLLM endpoints?',
      value: '4',
      validateInput: (v) => (/^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= 1000 ? undefined : 'a whole number from 1 to 1000'),
    }));
  if (!answer) return false;
  // The thread's script is bundled beside this one (dist/sim-worker.cjs).
  const cluster = await startSimClusterThread(join(__dirname, 'sim-worker.cjs'), Number(answer), { reply: 'lorem' });
  try {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri ?? services.context.globalStorageUri;
    const folder = vscode.Uri.joinPath(root, '.swarm');
    await vscode.workspace.fs.createDirectory(folder);
    const uri = vscode.Uri.joinPath(folder, 'simulator.hostfile');
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(writeHostfile(cluster.endpoints)));
    await services.session.open({ label: `local simulator (${cluster.endpoints.length} endpoints)`, uri }, cluster.endpoints, undefined, () => cluster.close());
    void vscode.commands.executeCommand('swarmLab.endpoints.focus');
    return true;
  } catch (err) {
    await cluster.close();
    throw err;
  }
}

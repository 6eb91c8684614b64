// Runs inside code-server's extension host (as `extensionTestsPath`): times the first activation of
// Swarm Lab in a fresh host and writes it where test/bench/extension.bench.ts reads it.
import { writeFileSync } from 'node:fs';
import * as vscode from 'vscode';

export async function run(): Promise<void> {
  const ext = vscode.extensions.getExtension('swarm-lab.swarm-lab');
  if (!ext) throw new Error('swarm-lab.swarm-lab is not loaded');
  const wasActive = ext.isActive;
  const t0 = performance.now();
  await ext.activate();
  const activateMs = performance.now() - t0;
  writeFileSync(process.env.SWARM_BENCH_OUT!, JSON.stringify({ activateMs, wasActive }));
}

import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { newRunId } from '../core/runs/run-folder.ts';
import type { RunRequest } from '../panel/protocol.ts';
import { cliEnv } from './cli-env.ts';
import { historyId } from './detached-history.ts';
import { rideConfig } from './ride-login.ts';
import type { Services } from './services.ts';
import { settings } from './settings.ts';
import { swarmFolder } from './window-state.ts';

/**
 * "Run on the cluster": the panel's scatter run started detached where the swarm is, by the CLI
 * bundled with the extension (`swarm scatter … --detach`, the editor's Node, no shell) — on the
 * login node when the swarm is connected through the window's SSH login (the run there dials the
 * endpoints itself and outlives the editor, the laptop and the tunnel), else on this machine. The
 * CLI rides the window's login (its control socket, through an ssh config written for it): no
 * second login, no second one-time password. Keys from the editor's secret storage reach the
 * run through the child's environment only. Answers the run's History id.
 */
export async function runOnCluster(services: Services, request: RunRequest): Promise<{ runId: string }> {
  const c = services.session.connection;
  if (!c) throw new Error('connect a swarm first');
  if (request.pattern !== 'scatter' || request.compare) throw new Error('Run on the cluster takes a scatter run of one arm (run other patterns and comparisons here, or detach them with the CLI)');
  if (!request.prompts.length) throw new Error('no prompts to run');
  if (request.n !== undefined || request.extra) throw new Error('Run on the cluster takes no n or extra request fields yet: run here, or detach with the CLI (--param)');
  if (!vscode.workspace.isTrusted) throw new Error('this workspace is not trusted, so Swarm Lab starts no processes');
  const s = settings();
  const master = c.tunnel?.master;
  const remotePath = !c.source.uri && s.sshVia && c.source.label.startsWith(`${s.sshVia}:`) ? c.source.label.slice(s.sshVia.length + 1) : undefined;
  if (!c.source.uri && !remotePath) throw new Error(`${c.source.label} is no hostfile a detached run can read: connect a hostfile`);
  // The inputs live in the workspace (or the extension's storage): the CLI copies them to the login node with the run.
  const folder = join(swarmFolder(services.context), 'detached', 'inputs');
  await mkdir(folder, { recursive: true });
  const prompts = join(folder, `${newRunId()}.prompts.jsonl`);
  await writeFile(prompts, `${request.prompts.map((p) => JSON.stringify({ ...(p.input ?? {}), prompt: p.prompt })).join('\n')}\n`);
  const argv = ['scatter', ...(remotePath ? ['--remote-hostfile', remotePath] : ['--hostfile', c.source.uri!.fsPath]), '--prompts', prompts, ...generationArgs(request), '--detach'];
  if (master) argv.push('--via', s.sshVia, '--ssh-config', await rideConfig(folder, master.controlSocket, s.sshConfigFile), '--runs-dir', s.remoteRunsFolder, '--ssh-path', s.sshPath);
  else argv.push('--runs-dir', services.detached.root);
  const env = await cliEnv(services, c.source.uri?.fsPath);
  const cli = join(services.context.extensionPath, 'dist', 'cli.js');
  const child = spawn(process.execPath, [cli, ...argv], { env, cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number>((done) => {
    child.once('error', (err) => ((stderr += err.message), done(1)));
    child.once('exit', (n) => done(n ?? 1));
  });
  services.log.info(`run on the cluster: swarm ${argv.filter((a) => a !== prompts).join(' ')}: exit ${code}${stderr ? `\n${stderr.trim()}` : ''}`);
  const id = stdout.trim().split('\n')[0] ?? '';
  if (code !== 0 || !/^[\w.-]+$/.test(id)) throw new Error(stderr.trim().split('\n').at(-1) || `the detached run did not start (exit ${code})`);
  services.detached.refresh();
  return { runId: historyId({ id }) };
}

/** The panel's generation settings as the CLI's flags. */
function generationArgs(r: RunRequest): string[] {
  const args: string[] = [];
  if (!r.batch) args.push('--no-batch');
  if (r.stream) args.push('--stream');
  if (r.model) args.push('--model', r.model);
  if (r.maxTokens !== undefined) args.push('--max-tokens', String(r.maxTokens));
  if (r.temperature !== undefined) args.push('--temperature', String(r.temperature));
  if (r.topP !== undefined) args.push('--top-p', String(r.topP));
  if (r.seed !== undefined) args.push('--seed', String(r.seed));
  // `=`: a value starting with a dash stays a value.
  if (r.system) args.push(`--system=${r.system}`);
  for (const stop of r.stop ?? []) args.push(`--stop=${stop}`);
  for (const [k, v] of r.tags) args.push('--tag', `${k}=${v}`);
  if (r.route) args.push('--route', r.route);
  return args;
}

import * as vscode from 'vscode';
import type { PoolOptions, RunOptions, TunnelOptions } from '../core/index.ts';

/** `swarmLab.*` settings, read fresh each time they are needed. */
export function settings() {
  const c = vscode.workspace.getConfiguration('swarmLab');
  return {
    model: c.get<string>('model', ''),
    maxTokens: c.get<number | null>('maxTokens', null),
    concurrency: c.get<number>('concurrency', 512),
    batching: c.get<boolean>('batching', true),
    requestTimeout: c.get<number>('requestTimeout', 300),
    healthInterval: c.get<number>('healthInterval', 15),
    sshVia: c.get<string>('ssh.via', '').trim(),
    sshPath: c.get<string>('ssh.path', 'ssh'),
    sshConfigFile: c.get<string>('ssh.configFile', ''),
    sshOptions: c.get<string[]>('ssh.options', []),
    sshMode: c.get<'auto' | 'forward' | 'socks'>('ssh.mode', 'auto'),
    hostfilePatterns: c.get<string[]>('hostfilePatterns', []),
    runsFolder: c.get<string>('runsFolder', '.swarm/runs'),
    remoteRunsFolder: c.get<string>('detachedRuns.remoteFolder', '.swarm-lab/runs').trim() || '.swarm-lab/runs',
    launch: {
      scheduler: c.get<'slurm' | 'pbs'>('launch.scheduler', 'pbs'),
      engine: c.get<'vllm' | 'sim' | 'sim-llama'>('launch.engine', 'vllm'),
      nodes: c.get<number>('launch.nodes', 1),
      serversPerNode: c.get<number>('launch.serversPerNode', 1),
      tensorParallel: c.get<number>('launch.tensorParallel', 1),
      model: c.get<string>('launch.model', ''),
      walltime: c.get<string>('launch.walltime', '01:00:00'),
      queue: c.get<string>('launch.queue', '').trim(),
      account: c.get<string>('launch.account', '').trim(),
      template: c.get<string>('launch.template', '').trim(),
      vllmArgs: c.get<string>('launch.vllmArgs', '').trim(),
      portBase: c.get<number>('launch.portBase', 8000),
      swarmCommand: c.get<string>('launch.swarmCommand', 'swarm').trim(),
      minHealthy: c.get<number>('launch.minHealthy', 100),
      healthTimeout: c.get<number>('launch.healthTimeout', 120),
      pollInterval: c.get<number>('launch.pollInterval', 10),
      warnBefore: c.get<number>('launch.warnBefore', 10),
    },
  };
}

export type Settings = ReturnType<typeof settings>;

/** `credentials`: the key each endpoint sends (endpointKeys). */
export function poolOptions(s: Settings, credentials: PoolOptions['credentials']): Partial<PoolOptions> {
  return { concurrency: s.concurrency, timeoutMs: s.requestTimeout * 1000, credentials };
}

export function generationOptions(s: Settings): RunOptions {
  return { ...(s.model ? { model: s.model } : {}), ...(s.maxTokens ? { maxTokens: s.maxTokens } : {}) };
}

export function tunnelOptions(s: Settings): TunnelOptions {
  return {
    via: s.sshVia,
    sshPath: s.sshPath,
    sshOptions: s.sshOptions,
    mode: s.sshMode,
    // A dropped master reconnects on its own; a new login (its terminal) only when one is really needed.
    selfHeal: true,
    ...(s.sshConfigFile ? { sshConfigFile: s.sshConfigFile } : {}),
  };
}

/** Glob patterns of hostfiles: the built-in names plus the user's. */
export function hostfileGlobs(s: Settings): string[] {
  return ['**/hostfile', '**/*.hostfile', '**/*.hosts', ...s.hostfilePatterns];
}

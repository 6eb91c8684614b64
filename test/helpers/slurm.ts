import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { availableParallelism, hostname, tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { freeLocalPort } from '../../src/core/tunnels/local-port.ts';
import { after, before } from 'node:test';
import { ensureBuilt, killAll, tempDir } from './cli.ts';
import { until } from './patience.ts';

const DAEMONS = ['/usr/sbin/munged', '/usr/sbin/slurmctld', '/usr/sbin/slurmd', '/usr/bin/sbatch'];

/**
 * Why the private Slurm cannot run here, or undefined when it can: Debian's slurm-wlm and munge
 * (scripts/install-test-deps.sh), and root, which slurmd needs to start jobs as their user.
 */
export const slurmUnavailable: string | undefined = !DAEMONS.every(existsSync)
  ? 'Slurm is not installed (scripts/install-test-deps.sh installs slurm-wlm and munge)'
  : process.getuid?.() !== 0
    ? 'the private Slurm runs slurmd, which starts jobs as their user, so it needs root'
    : undefined;

/**
 * A real one-node Slurm on loopback (notes: testing-offline, "A real Slurm on loopback"): its own
 * munged, slurmctld and slurmd in the foreground, as children of this process, on free ports and
 * private files. Client commands find it through `env.SLURM_CONF`.
 */
export class TestSlurm {
  readonly dir = mkdtempSync(join(tmpdir(), 'swarm-slurm-'));
  readonly conf = join(this.dir, 'slurm.conf');
  readonly node = hostname().split('.')[0]!;
  private readonly daemons: ChildProcess[] = [];

  /**
   * `cpus`: the CPUs the node says it has (default: this machine's). More than the machine's lets jobs
   * that mostly wait (on their walltime) run side by side (slurmd takes the configured count as true).
   */
  constructor(readonly cpus = availableParallelism()) {}

  /** What a client command (sbatch, swarm launch) needs to find this cluster. */
  get env(): Record<string, string> {
    return { SLURM_CONF: this.conf };
  }

  async start(): Promise<void> {
    // munged must reach its files as the munge user: the folder 755, munge's own subfolder for the rest.
    chmodSync(this.dir, 0o755);
    const mungeDir = join(this.dir, 'munge');
    mkdirSync(mungeDir);
    const uid = Number(execFileSync('id', ['-u', 'munge'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'munge'], { encoding: 'utf8' }));
    const key = join(mungeDir, 'munge.key');
    writeFileSync(key, randomBytes(1024), { mode: 0o400 });
    chownSync(mungeDir, uid, gid);
    chownSync(key, uid, gid);
    const socket = join(mungeDir, 'munge.socket');
    this.daemon('/usr/sbin/munged', ['--foreground', `--key-file=${key}`, `--socket=${socket}`, `--pid-file=${join(mungeDir, 'munged.pid')}`, `--log-file=${join(mungeDir, 'munged.log')}`, `--seed-file=${join(mungeDir, 'munged.seed')}`], { uid, gid });
    await waitUntil(() => existsSync(socket), 10_000, 'munged to open its socket');

    mkdirSync(join(this.dir, 'state'));
    mkdirSync(join(this.dir, 'spool'));
    const [ctldPort, dPort] = [await freeLocalPort(), await freeLocalPort()];
    writeFileSync(
      this.conf,
      [
        'ClusterName=swarmtest',
        `SlurmctldHost=${this.node}`,
        'SlurmUser=root',
        'AuthType=auth/munge',
        `AuthInfo=socket=${socket}`,
        'CredType=cred/munge',
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_CPU',
        'JobAcctGatherType=jobacct_gather/none',
        'MpiDefault=none',
        'ReturnToService=2',
        // A job past its time limit is signalled, then killed this soon after (default 30 s).
        'KillWait=5',
        `StateSaveLocation=${join(this.dir, 'state')}`,
        `SlurmdSpoolDir=${join(this.dir, 'spool')}`,
        `SlurmctldPidFile=${join(this.dir, 'slurmctld.pid')}`,
        `SlurmdPidFile=${join(this.dir, 'slurmd.pid')}`,
        `SlurmctldLogFile=${join(this.dir, 'slurmctld.log')}`,
        `SlurmdLogFile=${join(this.dir, 'slurmd.log')}`,
        `SlurmctldPort=${ctldPort}`,
        `SlurmdPort=${dPort}`,
        ...(this.cpus > availableParallelism() ? ['SlurmdParameters=config_overrides'] : []),
        `NodeName=${this.node} CPUs=${this.cpus} RealMemory=4000`,
        `PartitionName=debug Nodes=${this.node} Default=YES MaxTime=INFINITE State=UP`,
        '',
      ].join('\n'),
    );
    this.startController();
    this.daemon('/usr/sbin/slurmd', ['-D', '-f', this.conf]);
    await waitUntil(() => this.client('sinfo', ['-h', '-o', '%t']).trim() === 'idle', 30_000, 'the node to be idle');
  }

  private controller: ChildProcess | undefined;

  /** Starts slurmctld unless it runs (again: on the state the last one saved, its jobs kept). */
  startController(): void {
    if (this.controller && this.controller.exitCode === null && this.controller.signalCode === null) return;
    this.controller = this.daemon('/usr/sbin/slurmctld', ['-D', '-f', this.conf]);
  }

  /** Stops slurmctld, as a restart or a crash of the controller would: client commands fail until it is started again. */
  async stopController(): Promise<void> {
    const ctld = this.controller;
    if (!ctld || ctld.exitCode !== null || ctld.signalCode !== null) return;
    const exited = once(ctld, 'exit');
    ctld.kill('SIGTERM');
    await exited;
  }

  /** Runs a Slurm client command against this cluster; its output, or '' when it failed. */
  client(command: string, args: readonly string[]): string {
    try {
      // In the cluster's folder: `sbatch --wrap` writes its slurm-<id>.out where it runs, never into the checkout.
      return execFileSync(command, args, { encoding: 'utf8', env: { ...process.env, ...this.env }, stdio: ['ignore', 'pipe', 'pipe'], cwd: this.dir });
    } catch {
      return '';
    }
  }

  private daemon(path: string, args: string[], ids: { uid?: number; gid?: number } = {}): ChildProcess {
    const child = spawn(path, args, { stdio: 'ignore', ...ids });
    this.daemons.push(child);
    return child;
  }

  /** Cancels every job, stops the daemons (slurmd first, munged last) and removes the files. */
  async stop(): Promise<void> {
    this.client('scancel', ['--full', '--user', 'root']);
    for (const child of [...this.daemons].reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function waitUntil(probe: () => boolean, timeoutMs: number, what: string): Promise<void> {
  await until(probe, what, timeoutMs, { intervalMs: 100 });
}

/**
 * `n` consecutive loopback ports nothing listens on (the job's servers take port base, +1, …), below
 * Linux's ephemeral range (32768–60999): there, the local end of any connection the other tests open
 * could take one between this check and the job's servers binding it (CI saw a job wait for its second
 * server for 2 minutes).
 */
export async function freePorts(n: number): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer().once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * (32_768 - 20_000 - n));
    let ok = true;
    for (let i = 0; i < n && ok; i++) ok = !handedOut.has(base + i) && (await free(base + i));
    if (ok) {
      for (let i = 0; i < n; i++) handedOut.add(base + i);
      return base;
    }
  }
}

/** Ports this process has handed out: tests run side by side never get the same ones before their servers bind them. */
const handedOut = new Set<number>();

/** In the suite it is called in: `slurm` started and a scratch folder made (handed to `onDir`) before its tests, both gone after. */
export function withSlurm(slurm: TestSlurm, onDir: (dir: string) => void): void {
  let cleanup = async () => {};
  before(async () => {
    ensureBuilt();
    await slurm.start();
    const made = await tempDir();
    onDir(made.dir);
    cleanup = made.cleanup;
  });
  after(async () => {
    await killAll();
    await slurm.stop();
    await cleanup();
  });
}

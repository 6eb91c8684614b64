import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { connect } from 'node:net';
import pLimit from 'p-limit';
import { childEnv } from './child-env.ts';
import { destination } from './ssh-args.ts';
import { ForwardError, SshMaster, type ConnectOptions } from './master.ts';
import { commonArgs, type SshConfig } from './ssh-process.ts';
import type { PortAllocator } from './local-port.ts';

/** One forward: `-L 127.0.0.1:local:host:port` to an endpoint, or `-D 127.0.0.1:local` (SOCKS). */
export type Forward = { kind: '-L'; local: number; host: string; port: number } | { kind: '-D'; local: number };

export function forwardSpec(f: Forward): string {
  const host = f.kind === '-L' && f.host.includes(':') ? `[${f.host}]` : f.kind === '-L' ? f.host : '';
  return f.kind === '-L' ? `127.0.0.1:${f.local}:${host}:${f.port}` : `127.0.0.1:${f.local}`;
}

/**
 * What carries the forwards over one login: a ControlMaster (add and drop forwards at will), or a
 * single ssh process holding them all from the start (Windows' OpenSSH has no ControlMaster).
 */
export interface Carrier extends EventEmitter<{ down: [string] }> {
  readonly label: string;
  /** Sets the forwards up; a forward whose local port turns out taken moves to a new one (`local` is updated). */
  open(forwards: Forward[], ports: PortAllocator, options: OpenOptions): Promise<void>;
  alive(): Promise<boolean>;
  close(): Promise<void>;
  /** The process is exiting now: signal what we started, without waiting. */
  killNow(): void;
}

export interface OpenOptions extends ConnectOptions {
  /** Reconnecting: the forwards must come back on the same ports, so routes stay valid. */
  keepPorts?: boolean;
}

const PORT_RETRIES = 5;

/**
 * Forwards added one by one on a ControlMaster with `-O forward`: no new login for any of them.
 * Several carriers may ride one master (a connection and a launched job's scheduler): each is one
 * of its users, and the master stops when the last carrier closes.
 */
export class MasterCarrier extends EventEmitter<{ down: [string] }> implements Carrier {
  private forwards: Forward[] = [];
  private holding = true;
  /** `ssh -O forward` commands under way: a close waits for them, so none outlives the tunnel. */
  private readonly adding = new Set<Promise<void>>();
  private readonly relay = (why: string) => this.emit('down', why);

  constructor(
    readonly master: SshMaster,
    readonly watchIntervalMs: number,
  ) {
    super();
    master.on('down', this.relay);
  }

  get label(): string {
    return this.master.label;
  }

  async open(forwards: Forward[], ports: PortAllocator, options: OpenOptions): Promise<void> {
    if (!(await this.master.check())) await this.master.connect(options);
    const limit = pLimit(8);
    await Promise.all(
      forwards.map((f) =>
        limit(async () => {
          for (let attempt = 1; ; attempt++) {
            // Closed meanwhile (a reconnect under way when the user stopped): no forward is added after.
            if (!this.holding) throw new Error(`ssh ${this.label}: closed`);
            const adding = this.master.forward(f.kind, forwardSpec(f));
            this.adding.add(adding);
            try {
              return await adding;
            } catch (err) {
              if (!(err instanceof ForwardError && err.portTaken) || options.keepPorts || attempt >= PORT_RETRIES) throw err;
              f.local = await ports.take();
            } finally {
              this.adding.delete(adding);
            }
          }
        }),
      ),
    );
    if (!this.holding) throw new Error(`ssh ${this.label}: closed`); // a close took over: it owns the master's end
    this.forwards = forwards;
    this.master.watch(this.watchIntervalMs);
  }

  alive(): Promise<boolean> {
    return this.master.check();
  }

  /**
   * Lets go of the master. Still held by another user: only our forwards are dropped. The last
   * user: our own master ends and takes its forwards with it; on the user's master, only ours go.
   * Closing again stops the master again if nobody holds it (a reconnect that logged in meanwhile).
   */
  async close(): Promise<void> {
    this.master.off('down', this.relay);
    if (this.holding) {
      this.holding = false;
      this.master.letGo();
    }
    await Promise.allSettled([...this.adding]);
    if (this.master.held || !this.master.owned) await Promise.all(this.forwards.map((f) => this.master.cancel(f.kind, forwardSpec(f))));
    this.forwards = [];
    if (!this.master.held) await this.master.exit();
  }

  killNow(): void {
    this.master.killNow();
  }
}

/** Every forward on one long-running `ssh -N` (the Windows way): still exactly one login. */
export class ProcessCarrier extends EventEmitter<{ down: [string] }> implements Carrier {
  private child: ChildProcess | undefined;
  private closing = false;

  constructor(private readonly config: SshConfig) {
    super();
  }

  get label(): string {
    return destination(this.config.target);
  }

  async open(forwards: Forward[], ports: PortAllocator, options: OpenOptions): Promise<void> {
    if (options.keepPorts && (await this.alive())) return; // it holds every forward already
    for (let attempt = 1; ; attempt++) {
      const failure = await this.start(forwards, Boolean(options.interactive));
      if (!failure) return;
      if (!/in use|forwarding failed/i.test(failure) || options.keepPorts || attempt >= PORT_RETRIES) throw new Error(`ssh ${this.label}: ${failure}`);
      for (const f of forwards) f.local = await ports.take();
    }
  }

  /** Starts ssh and waits until every local port accepts connections; returns why it failed, if it did. */
  private start(forwards: Forward[], interactive: boolean): Promise<string | undefined> {
    this.closing = false;
    const args = [...commonArgs(this.config), '-N', '-o', 'ExitOnForwardFailure=yes', '-o', 'ServerAliveInterval=30', '-o', 'ServerAliveCountMax=3'];
    for (const f of forwards) args.push(f.kind, forwardSpec(f));
    args.push(destination(this.config.target));
    const child = spawn(this.config.sshPath, args, { stdio: interactive ? ['inherit', 'inherit', 'pipe'] : ['ignore', 'ignore', 'pipe'], shell: false, windowsHide: true, env: childEnv() });
    this.child = child;
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c;
      if (interactive) process.stderr.write(c);
    });
    return new Promise((resolve) => {
      let settled = false;
      const settle = (failure: string | undefined) => {
        if (!settled) resolve(failure);
        settled = true;
      };
      child.once('error', (err) => settle(`cannot run ${this.config.sshPath}: ${err.message}`));
      child.once('exit', (code) => {
        settle(stderr.trim() || `exit ${code}`);
        if (!this.closing && this.child === child) this.emit('down', `ssh for ${this.label} exited (${code}): ${stderr.trim().split('\n').at(-1) ?? ''}`);
      });
      const ports = forwards.map((f) => f.local);
      const poll = async () => {
        while (!settled) {
          if ((await Promise.all(ports.map(listening))).every(Boolean)) return settle(undefined);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      void poll();
    });
  }

  async alive(): Promise<boolean> {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async close(): Promise<void> {
    this.closing = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }

  killNow(): void {
    this.closing = true;
    this.child?.kill('SIGTERM');
  }
}

/** Does something accept connections on 127.0.0.1:`port` (one of our forwards)? */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { endpointId, type Endpoint } from '../endpoints/endpoint.ts';
import { checkHost } from '../hostfile/validate.ts';
import type { Route } from '../http/base-url.ts';
import { RequestFailure } from '../http/failure.ts';
import { nextRetry, RECONNECT_RETRY, type RetryTally } from '../pool/retry.ts';
import { listening, MasterCarrier, ProcessCarrier, type Carrier, type Forward } from './carriers.ts';
import { PortAllocator } from './local-port.ts';
import { SshMaster, type ConnectOptions } from './master.ts';
import { checkRemotePath, SshArgumentError } from './ssh-args.ts';
import { sshConfig, type SshConfig, type SshSettings } from './ssh-process.ts';
import { socksConnector } from './socks-connector.ts';

export type TunnelMode = 'forward' | 'socks';

export interface TunnelOptions extends SshSettings {
  /** `auto` (default): a forward per endpoint up to `socksThreshold` endpoints, one SOCKS proxy above. */
  mode?: 'auto' | TunnelMode;
  socksThreshold?: number;
  /** Let the first login prompt on this terminal (one-time password). */
  interactive?: boolean;
  /** ControlPersist of our own master, seconds. */
  persistSeconds?: number;
  /** Try local ports from here upwards instead of asking the OS for free ones. */
  localPortBase?: number;
  /** One ssh process for every forward; the default on Windows, whose OpenSSH lacks ControlMaster. */
  singleProcess?: boolean;
  /** How often to check that the master is alive. */
  watchIntervalMs?: number;
  /** Reconnect on its own as soon as the login is found gone (CLI); else only when asked (awaitUp, reconnect). */
  selfHeal?: boolean;
  /** How a reconnect logs in again when the master is gone; default: as the first login did. */
  relogin?: ConnectOptions;
}

/** How long a caller waits for a reconnect by default before giving up on the route. */
export const RECONNECT_BOUND_MS = 60_000;

/** Above this many endpoints, auto mode uses one SOCKS proxy instead of a forward each. */
export const SOCKS_THRESHOLD = 64;

export function chooseMode(endpointCount: number, options: Pick<TunnelOptions, 'mode' | 'socksThreshold'>): TunnelMode {
  if (options.mode && options.mode !== 'auto') return options.mode;
  return endpointCount > (options.socksThreshold ?? SOCKS_THRESHOLD) ? 'socks' : 'forward';
}

/**
 * Every endpoint of a hostfile carried over one SSH login to the login node. Endpoints keep their
 * identity: the tunnel only gives each a route (its forward's local address, or the SOCKS proxy),
 * which the pool dials while results and logs name the compute node.
 */
export class Tunnel extends EventEmitter<{ down: [string]; up: []; reconnecting: [string] }> {
  readonly routes = new Map<string, Route>();
  private readonly forwards: Forward[];
  private readonly ports: PortAllocator;
  private healing: Promise<boolean> | undefined;
  /** The check (and heal) every request failing at once shares: one `ssh -O check`, not hundreds. */
  private repair: Promise<boolean> | undefined;
  private closed = false;
  /** Ends the wait between reconnect attempts when the tunnel closes. */
  private readonly closing = new AbortController();

  private constructor(
    readonly mode: TunnelMode,
    private readonly endpoints: readonly Endpoint[],
    private readonly carrier: Carrier,
    private readonly options: TunnelOptions,
  ) {
    super();
    this.ports = new PortAllocator(options.localPortBase);
    this.forwards = [];
    carrier.on('down', (why) => {
      this.emit('down', why);
      if (options.selfHeal) void this.heal();
    });
  }

  /** The master this tunnel rides on, to run commands on the login node over the same login (none in single-process mode). */
  get master(): SshMaster | undefined {
    return this.carrier instanceof MasterCarrier ? this.carrier.master : undefined;
  }

  /** Validates everything first (no process starts on bad input), logs in once, sets up the routes. */
  static async open(endpoints: readonly Endpoint[], options: TunnelOptions, login?: SshLogin): Promise<Tunnel> {
    for (const ep of endpoints) {
      const problem = checkHost(ep.host);
      if (problem) throw new SshArgumentError(`endpoint ${endpointId(ep)}: ${problem}`);
    }
    login ??= await SshLogin.create(options);
    const relogin = options.relogin ?? login.relogin;
    const tunnel = new Tunnel(chooseMode(endpoints.length, options), endpoints, login.carrier, { ...options, ...(relogin ? { relogin } : {}) });
    await tunnel.setUp();
    return tunnel;
  }

  private async setUp(): Promise<void> {
    if (this.mode === 'socks') {
      this.forwards.push({ kind: '-D', local: await this.ports.take() });
    } else {
      for (const ep of this.endpoints) this.forwards.push({ kind: '-L', local: await this.ports.take(), host: ep.host, port: ep.port });
    }
    await this.carrier.open(this.forwards, this.ports, { interactive: Boolean(this.options.interactive) });
    this.routes.clear();
    if (this.mode === 'socks') {
      const proxy = { host: '127.0.0.1', port: this.forwards[0]!.local };
      for (const ep of this.endpoints) {
        this.routes.set(endpointId(ep), { kind: 'socks', origin: `http://${endpointId(ep)}`, connect: socksConnector(proxy, ep), via: `socks 127.0.0.1:${proxy.port}` });
      }
    } else {
      this.endpoints.forEach((ep, i) => {
        const local = this.forwards[i]!.local;
        this.routes.set(endpointId(ep), { kind: 'forward', origin: `http://127.0.0.1:${local}`, via: `ssh forward 127.0.0.1:${local}` });
      });
    }
  }

  get label(): string {
    return this.carrier.label;
  }

  /** `127.0.0.1:port` of the SOCKS proxy in SOCKS mode. */
  get socksAddress(): string | undefined {
    return this.mode === 'socks' ? `127.0.0.1:${this.forwards[0]!.local}` : undefined;
  }

  /** Forward mode: the endpoints at their local addresses, same order and tags (a hostfile for other tools). */
  localEndpoints(): Endpoint[] {
    if (this.mode !== 'forward') throw new Error('local addresses exist only in forward mode');
    return this.endpoints.map((ep, i) => ({ host: '127.0.0.1', port: this.forwards[i]!.local, tags: ep.tags }));
  }

  alive(): Promise<boolean> {
    return this.carrier.alive();
  }

  /**
   * Brings the login and every forward back on the same local ports, so routes stay valid
   * (a ControlPersist socket still valid means no new login at all).
   */
  async reconnect(options: ConnectOptions = this.options.relogin ?? {}): Promise<void> {
    await this.carrier.open(this.forwards, this.ports, { ...options, interactive: options.interactive ?? this.options.interactive ?? false, keepPorts: true });
    this.emit('up');
  }

  /**
   * For a request that failed on this route (refused, or reset as the master died under it):
   * resolves true once a broken route carries traffic again (starting a reconnect, or joining the
   * one under way), so the request is worth sending again. False when the route was fine all
   * along (the failure is the endpoint's own: fail over), after `boundMs`, on `signal`, or once
   * the tunnel closes. A reconnect outliving the bound carries on for later requests.
   */
  awaitUp(signal?: AbortSignal, boundMs = RECONNECT_BOUND_MS): Promise<boolean> {
    if (this.closed || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (up: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        resolve(up);
      };
      const abort = () => finish(false);
      const timer = setTimeout(() => finish(false), boundMs);
      signal?.addEventListener('abort', abort, { once: true });
      this.repair ??= this.healIfBroken().finally(() => (this.repair = undefined));
      void this.repair.then(finish);
    });
  }

  private async healIfBroken(): Promise<boolean> {
    if (this.healing) return this.healing;
    const intact = (await this.carrier.alive()) && (await Promise.all(this.forwards.map((f) => listening(f.local)))).every(Boolean);
    return intact ? false : this.heal();
  }

  /**
   * One reconnect loop at a time, retried with backoff until it works or the tunnel closes. On a
   * live master it only re-adds the forwards (no login); on a dead one it logs in once.
   */
  private heal(): Promise<boolean> {
    this.healing ??= (async () => {
      const tally: RetryTally = { attempts: 0, refusals: 0, startedAt: performance.now() };
      while (!this.closed) {
        tally.attempts++;
        try {
          await this.reconnect();
          return true;
        } catch (err) {
          const delay = nextRetry(new RequestFailure('tunnel', (err as Error).message), tally, RECONNECT_RETRY);
          if (delay === null) break;
          if (!this.closed) this.emit('reconnecting', `${(err as Error).message}; next try in ${delay / 1000} s`);
          await sleep(delay, undefined, { signal: this.closing.signal }).catch(() => undefined);
        }
      }
      return false;
    })().finally(() => (this.healing = undefined));
    return this.healing;
  }

  /** Drops every forward and our master (the user's own master stays); no ssh process or port is left. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    this.removeAllListeners();
    const healing = this.healing;
    await this.carrier.close(); // also ends a login under way (its ssh runs on our control socket)
    // A reconnect that logged in all the same before it noticed: once it has settled, close again.
    if (healing) {
      await healing;
      await this.carrier.close();
    }
  }

  /** The process is exiting right now (a second Ctrl-C): signal our ssh without waiting. */
  killNow(): void {
    this.closed = true;
    this.carrier.killNow();
  }
}

/**
 * The one login a tunnel rides on, made before the endpoints are known so a hostfile on the
 * cluster can be read over it first.
 */
export class SshLogin {
  private closed = false;

  private constructor(
    readonly carrier: Carrier,
    private readonly config: SshConfig,
    /** How this login was made, so a reconnect that needs a new login asks the same way. */
    readonly relogin?: ConnectOptions,
  ) {}

  /**
   * Logs in (or finds the user's own master). `runLogin` hands the login command to the caller to
   * run where a one-time password can be typed, e.g. a VS Code terminal.
   */
  static async create(options: TunnelOptions, runLogin?: ConnectOptions['runLogin']): Promise<SshLogin> {
    const config = sshConfig(options);
    const single = options.singleProcess ?? process.platform === 'win32';
    const how: ConnectOptions = { interactive: Boolean(options.interactive), ...(runLogin ? { runLogin } : {}) };
    if (single) return new SshLogin(new ProcessCarrier(config), config, how);
    const master = new SshMaster(config, options.persistSeconds);
    await master.connect(how);
    return new SshLogin(new MasterCarrier(master, options.watchIntervalMs ?? 5_000), config, how);
  }

  /** What makes two logins the same one: the ssh command line they would run (target, port, config file, options). */
  static key(options: TunnelOptions): string {
    return JSON.stringify([sshConfig(options), options.persistSeconds ?? null, options.singleProcess ?? null]);
  }

  /**
   * Another user of this same login (its own handle, to close on its own): no new login, and the
   * master lives until every handle is closed. Undefined when it cannot be shared: every handle
   * closed already (the login is over), or single-process mode (its forwards are fixed at login).
   */
  share(): SshLogin | undefined {
    if (!(this.carrier instanceof MasterCarrier) || !this.carrier.master.retain()) return undefined;
    return new SshLogin(new MasterCarrier(this.carrier.master, this.carrier.watchIntervalMs), this.config, this.relogin);
  }

  /** Reads a file on the login node over the master (no new login); single-process mode needs one more. */
  async readRemoteFile(path: string): Promise<string> {
    // checkRemotePath's character set has nothing the remote shell would interpret but a leading ~/.
    return this.commands().exec(['cat', '--', checkRemotePath(path)]);
  }

  /** What runs commands on the login node: the master this login rides on (single-process mode: a login per command). */
  commands(): SshMaster {
    return this.carrier instanceof MasterCarrier ? this.carrier.master : new SshMaster(this.config);
  }

  /** This handle lets go of the login (once: closing again does nothing); the last one ends it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.carrier.close();
  }

  killNow(): void {
    this.carrier.killNow();
  }
}

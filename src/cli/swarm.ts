import { Option, type Command } from 'commander';
import {
  combinationProblem,
  extraProblem,
  checkRemotePath,
  DEFAULT_RETRY,
  endpointId,
  hostfileFromText,
  cappedList,
  HostfileError,
  type HostfileIssue,
  loadHostfile,
  matchesTags,
  SelectionError,
  SwarmPool,
  type Endpoint,
  type PoolOptions,
  parseTarget,
  socksConnector,
  SshArgumentError,
  SshLogin,
  Tunnel,
  type Route,
  type RunOptions,
  type TunnelOptions,
} from '../core/index.ts';
import { CliError, EXIT } from './exit.ts';
import { printable } from './format.ts';
import { exitCode, onExit, type Stop } from './interrupt.ts';
import { num, type GenerationFlags, type SwarmFlags } from './options.ts';
import { ServiceAccess, type AccessFlags } from './service-access.ts';

/**
 * How a command reaches the swarm: directly, through an SSH login it opens, or a SOCKS proxy opened
 * elsewhere; services at a base URL always directly, with their keys and TLS (AccessFlags).
 */
export interface ReachFlags extends AccessFlags {
  remoteHostfile?: string;
  via?: string;
  sshOption: string[];
  sshPath?: string;
  sshConfig?: string;
  tunnelMode: 'auto' | 'forward' | 'socks';
  socks?: string;
  reconnectTimeout: number;
}

export function addReachOptions(cmd: Command, modeFlags = true): Command {
  cmd
    .option('--remote-hostfile <path>', 'a hostfile on the login node (written by the PBS job), read over --via')
    .option('--via <[user@]host[:port]>', 'reach the endpoints through one SSH login to this host (ControlMaster; one one-time password)')
    .addOption(new Option('--ssh-option <Key=value>', 'extra ssh -o option (repeatable)').argParser((v: string, prev: string[]) => [...prev, v]).default([], 'none'))
    .option('--ssh-path <path>', 'the ssh client to run', 'ssh')
    .option('--ssh-config <file>', 'ssh config file instead of ~/.ssh/config')
    .option('--reconnect-timeout <seconds>', 'with --via: how long requests wait for a lost SSH login to come back before failing over', num('--reconnect-timeout', 0, 3600), 60);
  if (modeFlags) {
    cmd
      .addOption(new Option('--tunnel-mode <mode>', 'with --via: a forward per endpoint, one SOCKS proxy, or auto (SOCKS above 64 endpoints)').choices(['auto', 'forward', 'socks']).default('auto'))
      .option('--socks <host:port>', 'reach every endpoint through this SOCKS5 proxy (e.g. an `ssh -D` opened elsewhere)')
      .option('--api-key-command <command>', 'run this (no shell) for the key of endpoints without key= of their own; run again when a key that worked is refused (it expired)')
      .option('--ca-file <file>', 'PEM CA certificate(s) to trust, besides the usual ones, for https base-URL endpoints');
  }
  return cmd;
}

/** The swarm a command talks to, and everything to close when it is done. */
export interface Swarm {
  endpoints: Endpoint[];
  pool: SwarmPool;
  tunnel: Tunnel | undefined;
  /** The one SSH login of --via (what a launched job's scheduler is asked through during the run). */
  login: SshLogin | undefined;
  close(): Promise<void>;
}

export interface OpenOptions {
  pool?: Partial<PoolOptions>;
  /** Ctrl-C: checked between steps; an interrupted start-up closes what it opened and throws Interrupted. */
  signal?: AbortSignal;
  /** Look the model and tags up now, so an unserved model is bad input (exit 2) before any result is written. */
  select?: RunOptions;
  /** A login already made (the launcher's, which submitted the job over it): ridden, and closed with the swarm. */
  login?: SshLogin;
  /** The endpoints of a local hostfile this process talks to (a shard's), chosen before any route is opened. */
  only?: (endpoints: Endpoint[]) => Endpoint[];
}

/** Start-up stopped by Ctrl-C; nothing was left open. */
class Interrupted extends Error {
  override name = 'Interrupted';
}

/**
 * openSwarm under the command's stop: when Ctrl-C comes first, runs `onStopped` (writing what is
 * owed), sets the signal's exit code and returns undefined.
 */
export async function openUnlessStopped(
  flags: SwarmFlags & Partial<GenerationFlags> & ReachFlags,
  stop: Stop,
  options: Omit<OpenOptions, 'signal'> = {},
  onStopped: () => Promise<void> = async () => {},
): Promise<Swarm | undefined> {
  try {
    return await openSwarm(flags, { ...options, signal: stop.signal });
  } catch (err) {
    if (!(err instanceof Interrupted)) throw err;
    await onStopped();
    process.exitCode = exitCode(stop, false);
    return undefined;
  }
}

/**
 * Reads the hostfile (a local one before any ssh starts, a remote one over the one SSH login),
 * opens the tunnel if asked, and builds the pool on the endpoints' routes. Bad input throws
 * CliError before any request.
 */
export async function openSwarm(flags: SwarmFlags & Partial<GenerationFlags> & ReachFlags, options: OpenOptions = {}): Promise<Swarm> {
  checkFlags(flags);
  const access = new ServiceAccess(flags);
  const reconnectMs = (flags.reconnectTimeout ?? 60) * 1000;
  const tunnelOptions = flags.via ? tunnelOptionsOf({ ...flags, via: flags.via }) : undefined;
  const step = async <T>(work: Promise<T>): Promise<T> => {
    try {
      const value = await work;
      if (options.signal?.aborted) throw new Interrupted('interrupted');
      return value;
    } catch (err) {
      throw options.signal?.aborted ? new Interrupted('interrupted') : err;
    }
  };
  let login: SshLogin | undefined;
  let tunnel: Tunnel | undefined;
  let pool: SwarmPool | undefined;
  // A second Ctrl-C exits at once: our ssh master must not outlive us.
  const forget = onExit(() => (tunnel ?? login)?.killNow());
  const close = async () => {
    forget();
    await pool?.close();
    await (tunnel ?? login)?.close();
  };
  try {
    const read = flags.hostfile ? await step(readHostfile(flags.hostfile)) : undefined;
    if (read) checkTags(read, flags);
    const local = read && options.only ? options.only(read) : read;
    // Keys and CAs of a local hostfile are checked before any ssh starts.
    const localAccess = local ? await step(access.poolOptions(local)) : undefined;
    if (tunnelOptions) login = options.login ?? (await step(sshLogin({ ...flags, via: flags.via! })));
    const endpoints = local ?? (await step(readRemoteHostfile(login!, flags.via!, flags.remoteHostfile!)));
    if (!local) checkTags(endpoints, flags);
    const reach = { ...options.pool, ...(localAccess ?? (await step(access.poolOptions(endpoints)))) };
    // Services at a base URL are dialled directly; the login carries the compute nodes.
    const carried = endpoints.filter((ep) => !ep.url);
    let swarmPool: SwarmPool;
    if (tunnelOptions && carried.length) {
      const healing = await step(ssh(() => Tunnel.open(carried, tunnelOptions, login)));
      tunnel = healing;
      process.stderr.write(`tunnel: ${carried.length} endpoint(s) through ${healing.label} (${healing.mode}${healing.socksAddress ? ` ${healing.socksAddress}` : ''})\n`);
      swarmPool = new SwarmPool(endpoints, poolOptions(flags, { ...reach, routes: new Map(healing.routes), awaitRoute: (_id, signal) => healing.awaitUp(signal, reconnectMs) }));
    } else {
      swarmPool = directPool(endpoints, flags, reach);
    }
    pool = swarmPool;
    if (tunnel) watchTunnel(tunnel, swarmPool);
    if (options.select) await step(select(swarmPool, options.select, options.signal));
    return { endpoints, pool: swarmPool, tunnel, login, close };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}

/** How `--via` and the ssh flags log in and carry endpoints; the first login may prompt on this terminal. */
export function tunnelOptionsOf(flags: ReachFlags & { via: string }): TunnelOptions {
  return { via: flags.via, sshPath: flags.sshPath, sshOptions: flags.sshOption, mode: flags.tunnelMode, interactive: Boolean(process.stdin.isTTY), selfHeal: true, ...(flags.sshConfig ? { sshConfigFile: flags.sshConfig } : {}) };
}

/** The one SSH login of `--via`, ssh input problems as bad input (exit 2). */
export function sshLogin(flags: ReachFlags & { via: string }): Promise<SshLogin> {
  return ssh(() => SshLogin.create(tunnelOptionsOf(flags)));
}

/** A pool on endpoints reached directly, or through the SOCKS proxy of `--socks`. */
export function directPool(endpoints: Endpoint[], flags: SwarmFlags & Pick<ReachFlags, 'socks'>, extra: Partial<PoolOptions> = {}): SwarmPool {
  const routes = new Map<string, Route>();
  if (flags.socks) {
    const proxy = socksAddress(flags.socks);
    for (const ep of endpoints) if (!ep.url) routes.set(endpointId(ep), { kind: 'socks', origin: `http://${endpointId(ep)}`, connect: socksConnector(proxy, ep), via: `socks ${flags.socks}` });
  }
  return new SwarmPool(endpoints, poolOptions(flags, { ...extra, routes }));
}

/** Tells the user what the tunnel does; endpoints cut off by it come back once it is up again. */
function watchTunnel(tunnel: Tunnel, pool: SwarmPool): void {
  tunnel.on('down', (why) => {
    process.stderr.write(`tunnel down: ${printable(why)}; reconnecting\n`);
    for (const s of pool.endpoints) if (pool.routed(s.slot)) pool.markDown(s.slot, { status: 'tunnel-down', reason: `tunnel down: ${why}` });
  });
  tunnel.on('reconnecting', (why) => process.stderr.write(`tunnel: reconnect failed: ${printable(why)}\n`));
  tunnel.on('up', () => {
    const cut = pool.endpoints.filter((s) => s.status === 'tunnel-down').map((s) => s.slot);
    if (cut.length) process.stderr.write(`tunnel: reconnected through ${tunnel.label}\n`);
    pool.forget(cut);
  });
}

/**
 * The run's endpoints and model, looked up before the run: a model no answering endpoint serves
 * is bad input (exit 2). With none answering at all, the run goes ahead and fails each prompt
 * with the reason (exit 1).
 */
async function select(pool: SwarmPool, run: RunOptions, signal = new AbortController().signal): Promise<void> {
  try {
    await pool.select(run, run.tags ?? [], signal);
  } catch (err) {
    if (err instanceof SelectionError && pool.endpoints.some((s) => s.status === 'up')) throw new CliError(err.message, EXIT.badInput);
    if (!(err instanceof SelectionError)) throw err;
  }
}

function checkFlags(flags: SwarmFlags & Partial<GenerationFlags> & ReachFlags): void {
  if (Boolean(flags.hostfile) === Boolean(flags.remoteHostfile)) throw new CliError('give exactly one of --hostfile FILE and --remote-hostfile PATH');
  if (flags.remoteHostfile && !flags.via) throw new CliError('--remote-hostfile needs --via, the login node to read it from');
  if (flags.via && flags.socks) throw new CliError('--via opens its own tunnel; --socks is for a proxy opened elsewhere: give one of them');
  if (flags.socks) socksAddress(flags.socks);
  try {
    if (flags.remoteHostfile) checkRemotePath(flags.remoteHostfile);
  } catch (err) {
    throw new CliError(`--remote-hostfile: ${(err as Error).message}`);
  }
  const extra = extraProblem(flags.param);
  if (extra) throw new CliError(`--param: ${extra}`);
  const combination = combinationProblem({ temperature: flags.temperature, n: flags.n, stop: flags.stop });
  if (combination) throw new CliError(combination);
}

/** SSH input problems are bad input (exit 2); anything else ssh reports stays an error of the run. */
async function ssh<T>(open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (err) {
    throw err instanceof SshArgumentError ? new CliError(err.message) : new CliError((err as Error).message, 1);
  }
}

export async function readHostfile(path: string): Promise<Endpoint[]> {
  try {
    const { endpoints, warnings } = await loadHostfile(path);
    warn(warnings);
    return endpoints;
  } catch (err) {
    throw new CliError(err instanceof HostfileError ? err.message : (err as Error).message);
  }
}

function warn(warnings: readonly HostfileIssue[]): void {
  if (warnings.length) process.stderr.write(`${cappedList(warnings, (w) => `warning: ${printable(String(w))}`)}\n`);
}

async function readRemoteHostfile(login: SshLogin, via: string, path: string): Promise<Endpoint[]> {
  const text = await ssh(() => login.readRemoteFile(path));
  try {
    const { endpoints, warnings } = hostfileFromText(text, `${via}:${path}`);
    warn(warnings);
    return endpoints;
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

function checkTags(endpoints: Endpoint[], flags: SwarmFlags & ReachFlags): void {
  if (!flags.tag.length || endpoints.some((e) => matchesTags(e, flags.tag))) return;
  const present = [...new Set(endpoints.flatMap((e) => Object.entries(e.tags).map(([k, v]) => `${k}=${v}`)))];
  throw new CliError(`no endpoint in ${flags.hostfile ?? flags.remoteHostfile} has tag ${flags.tag.map(([k, v]) => `${k}=${v}`).join(' and ')}; tags there: ${present.join(', ') || '(none)'}`);
}

function socksAddress(spec: string): { host: string; port: number } {
  try {
    const target = parseTarget(spec);
    if (!target.port || target.user) throw new SshArgumentError('expected host:port');
    return { host: target.host, port: target.port };
  } catch (err) {
    throw new CliError(`--socks ${spec}: ${(err as Error).message}`);
  }
}

/** Pool options from the flags; keys come from ServiceAccess (the environment or a key command, never a flag in shell history). */
function poolOptions(flags: SwarmFlags, extra: Partial<PoolOptions>): Partial<PoolOptions> {
  const options: Partial<PoolOptions> = { ...extra };
  if (flags.concurrency) options.concurrency = flags.concurrency;
  if (flags.timeout) options.timeoutMs = flags.timeout * 1000;
  if (flags.timeoutPerSequence) options.timeoutPerSequenceMs = flags.timeoutPerSequence * 1000;
  if (flags.batchTimeoutCap) options.batchTimeoutCapMs = flags.batchTimeoutCap * 1000;
  if (flags.maxNumSeqs) options.maxNumSeqs = flags.maxNumSeqs;
  if (flags.attempts) options.retry = { ...DEFAULT_RETRY, maxAttempts: flags.attempts };
  if (flags.stallTimeout) options.stallTimeoutMs = flags.stallTimeout * 1000;
  if (flags.hedgeAfter) options.hedgeFactor = flags.hedgeAfter;
  if (flags.hedge === false) options.hedge = false;
  if (flags.route) options.route = flags.route;
  return options;
}

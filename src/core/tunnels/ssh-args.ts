import { checkHost, checkPort } from '../hostfile/validate.ts';

/** Where ssh logs in: `[user@]host[:port]`, validated before any process starts. */
export interface SshTarget {
  user?: string;
  host: string;
  port?: number;
}

/** A value that would reach ssh's argument list in a form it could misread. */
export class SshArgumentError extends Error {
  override name = 'SshArgumentError';
}

const USER = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

/**
 * Parses `[user@]host[:port]` (IPv6 as `[addr]:port`). Rejects anything ssh could read as an
 * option (a leading `-`), whitespace, control characters and shell or ssh metacharacters.
 */
export function parseTarget(spec: string): SshTarget {
  const at = spec.lastIndexOf('@');
  const user = at >= 0 ? spec.slice(0, at) : undefined;
  let rest = at >= 0 ? spec.slice(at + 1) : spec;
  if (user !== undefined && !USER.test(user)) throw new SshArgumentError(`ssh user "${printable(user)}" is not a valid user name`);
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(rest);
  if (bracketed) {
    rest = bracketed[1]!;
    if (bracketed[2] !== undefined) port = sshPort(bracketed[2]);
  } else if (rest.split(':').length === 2) {
    const [h, p] = rest.split(':') as [string, string];
    rest = h;
    port = sshPort(p);
  }
  const problem = checkHost(rest);
  if (problem) throw new SshArgumentError(`ssh host: ${problem}`);
  return { ...(user ? { user } : {}), host: rest, ...(port ? { port } : {}) };
}

function sshPort(text: string): number {
  const checked = checkPort(text);
  if ('error' in checked) throw new SshArgumentError(`ssh port: ${checked.error}`);
  return checked.port;
}

/** `user@host` as ssh's destination argument (the port goes in `-p`). */
export function destination(target: SshTarget): string {
  return target.user ? `${target.user}@${target.host}` : target.host;
}

export function targetLabel(target: SshTarget): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return `${target.user ? `${target.user}@` : ''}${host}${target.port ? `:${target.port}` : ''}`;
}

/**
 * Options that would run local commands, open ports beyond loopback, or fight our own control
 * socket. A workspace setting must never be able to smuggle these in.
 */
const FORBIDDEN_OPTIONS = new Set(
  [
    'ProxyCommand', 'LocalCommand', 'PermitLocalCommand', 'KnownHostsCommand', 'RemoteCommand',
    'GatewayPorts', 'LocalForward', 'RemoteForward', 'DynamicForward', 'ControlMaster', 'ControlPath',
    'ControlPersist', 'Tunnel', 'TunnelDevice', 'ForkAfterAuthentication', 'SessionType', 'StdinNull',
    'Match', 'Include', 'SecurityKeyProvider', 'PKCS11Provider',
  ].map((o) => o.toLowerCase()),
);

/** `KEY=VALUE` for `-o`; the key must be a plain ssh option name, the value printable and single-line. */
export function checkSshOption(spec: string): string {
  const eq = spec.indexOf('=');
  const key = eq > 0 ? spec.slice(0, eq) : '';
  const value = spec.slice(eq + 1);
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(key)) throw new SshArgumentError(`ssh option "${printable(spec)}" must look like Key=value`);
  if (FORBIDDEN_OPTIONS.has(key.toLowerCase())) throw new SshArgumentError(`ssh option ${key} is not allowed here (it runs commands, opens ports or replaces Swarm Lab's own control socket)`);
  if (!value || /[\0-\x1f\x7f]/.test(value) || value.startsWith('-')) throw new SshArgumentError(`ssh option ${key} has an unusable value "${printable(value)}"`);
  return `${key}=${value}`;
}

/** A path on the login node: absolute or home-relative, a conservative character set, no option look-alikes. */
export function checkRemotePath(path: string): string {
  if (!/^(~\/|\/)[A-Za-z0-9._+\/-]*$/.test(path) || path.split('/').some((part) => part.startsWith('-')) || path.length > 1024) {
    throw new SshArgumentError(`remote path "${printable(path)}" must be absolute (or start with ~/) and use only letters, digits and . _ + - /`);
  }
  return path;
}

/** Local file paths handed to ssh (its binary, a config file): absolute or relative, never option-like. */
export function checkLocalPath(path: string, what: string): string {
  if (!path || path.startsWith('-') || /[\0-\x1f\x7f]/.test(path)) throw new SshArgumentError(`${what} "${printable(path)}" is not a usable path`);
  return path;
}

function printable(text: string): string {
  return text.replace(/[\0-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

import { isIP } from 'node:net';
import type { KeyRef } from '../endpoints/endpoint.ts';

// Checks return an error message, or undefined when the value is fine.

const QUOTED_CHARS = 300; // above any valid host name (253)

/** Quotes user text in messages, escaping control characters and cutting it short, so junk stays readable. */
export function quote(text: string): string {
  return text.length > QUOTED_CHARS ? `${JSON.stringify(text.slice(0, QUOTED_CHARS)).slice(0, -1)}…" (${text.length.toLocaleString('en-US')} characters)` : JSON.stringify(text);
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

/**
 * Hostnames follow RFC 1123. A single trailing dot (a fully qualified name) is accepted:
 * DNS, ssh and http all take it. Underscores are rejected: they are not valid in hostnames
 * and resolvers disagree on them.
 */
export function checkHostname(host: string): string | undefined {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length > 253) return `host ${quote(host)} is longer than 253 characters`;
  if (name.includes('_')) return `host ${quote(host)} contains "_", which is not allowed in hostnames (RFC 1123)`;
  const bad = /[^a-z0-9.-]/i.exec(name);
  if (bad) return `host ${quote(host)} contains invalid character ${quote(bad[0])}`;
  const labels = name.split('.');
  for (const label of labels) {
    if (label === '') return `host ${quote(host)} has an empty label`;
    if (label.length > 63) return `host ${quote(host)} has a label longer than 63 characters`;
    if (!LABEL.test(label)) return `host ${quote(host)} has a label starting or ending with "-"`;
  }
  // An all-numeric last label means someone meant an IPv4 address (e.g. 10.0.0.256 or 010.0.0.1).
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return `host ${quote(host)} is not a valid IPv4 address`;
  return undefined;
}

/** Any host: a hostname or an IPv4/IPv6 literal (IPv6 without brackets). */
export function checkHost(host: string): string | undefined {
  if (host === '') return 'missing host';
  // Hosts may end up as ssh arguments, where a leading "-" would be read as an option.
  if (host.startsWith('-')) return `host ${quote(host)} starts with "-": refused, it could be taken for a command-line option`;
  if (host.includes(':')) return checkIPv6(host);
  if (isIP(host) === 4) return undefined;
  return checkHostname(host);
}

export function checkIPv6(host: string): string | undefined {
  // Zone ids (fe80::1%eth0) cannot go into an http URL unescaped.
  if (host.includes('%')) return `host ${quote(host)}: IPv6 zone ids are not supported`;
  if (isIP(host) !== 6) return `host ${quote(host)} is not a valid IPv6 address`;
  return undefined;
}

export type PortCheck = { port: number } | { error: string };

export function checkPort(text: string): PortCheck {
  const port = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) return { error: `port ${quote(text)} is not an integer from 1 to 65535` };
  return { port };
}

/** Tag keys may hold anything but whitespace and "="; values anything but whitespace. */
export function checkTag(key: string, value: string): string | undefined {
  if (key === '') return `tag ${quote(`${key}=${value}`)} has an empty key`;
  if (/[\s=]/.test(key)) return `tag key ${quote(key)} contains whitespace or "="`;
  if (/\s/.test(value)) return `tag value ${quote(value)} contains whitespace`;
  return undefined;
}

/** A URL as messages may show it: whatever could hold a secret (user:password@, ?query, #fragment) cut out. */
export function shownUrl(text: string): string {
  return quote(text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1…@').replace(/[?#].*$/s, '?…'));
}

export type BaseUrlCheck = { url: string; host: string; port: number } | { error: string };

/**
 * A service's base URL (`https://host/path/v1`): http or https, a valid host, no credentials, query
 * or fragment (a key has no place in a hostfile, and a base URL is joined with request paths). The
 * URL comes back normalised (host lower-cased, a default port dropped, no trailing slash).
 */
export function checkBaseUrl(text: string): BaseUrlCheck {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return { error: `${shownUrl(text)} is not a URL` };
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return { error: `${shownUrl(text)}: a base URL must be https:// (or http://)` };
  if (u.username || u.password) return { error: `${shownUrl(text)} holds credentials: refused — name the key with key=env:NAME or key=secret:NAME instead` };
  if (/[?#]/.test(text)) return { error: `${shownUrl(text)}: a base URL takes no query or fragment (a key goes in key=env:NAME or key=secret:NAME)` };
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const hostError = checkHost(host);
  if (hostError) return { error: hostError };
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return { url: `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`, host, port };
}

/** Tag names people give a key under; their values are keys, refused like a literal `key=`. */
const KEY_LIKE = new Set(['api_key', 'api-key', 'apikey', 'token', 'access_token', 'bearer', 'authorization', 'password', 'secret']);

const LITERAL_KEY = 'a hostfile never holds a key itself (it would end up in backups, logs and version control): give key=env:NAME (an environment variable) or key=secret:NAME (VS Code\'s secret storage)';

export type KeyRefCheck = { ref: KeyRef } | { error: string };

/** `key=env:NAME` or `key=secret:NAME`; anything else is taken for a literal key and refused without being quoted. */
export function checkKeyRef(value: string): KeyRefCheck {
  const m = /^(env|secret):(.*)$/s.exec(value);
  if (!m) return { error: `key=…: ${LITERAL_KEY}` };
  const [, from, name] = m as unknown as [string, 'env' | 'secret', string];
  const valid = from === 'env' ? /^[A-Za-z_][A-Za-z0-9_]*$/ : /^[A-Za-z0-9._-]+$/;
  if (!valid.test(name)) return { error: `key=${from}:${quote(name)}: not a valid ${from === 'env' ? 'environment variable' : 'secret'} name` };
  return { ref: { from, name } };
}

/** A tag that looks like a key given in the clear (`api_key=…`, `token=…`): refused, its value never quoted. */
export function keyLikeTag(key: string): string | undefined {
  return KEY_LIKE.has(key.toLowerCase()) ? `tag ${quote(key)} would hold a key: ${LITERAL_KEY}` : undefined;
}

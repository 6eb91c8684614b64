import { endpointId, type Endpoint, type KeyRef } from '../endpoints/endpoint.ts';
import { makeIssue, type HostfileIssue } from './issue.ts';
import { checkBaseUrl, checkHost, checkIPv6, checkKeyRef, checkPort, checkTag, keyLikeTag, quote } from './validate.ts';

const ERRORS_PER_LINE = 5;

/** Aurora-Swarm's port when a line gives none. */
export const DEFAULT_PORT = 8000;

export interface ParsedHostfile {
  endpoints: Endpoint[];
  errors: HostfileIssue[];
  warnings: HostfileIssue[];
  /** 1-based source line of each endpoint, parallel to `endpoints`. */
  lines: number[];
}

/** The first column, split into host and the port it carries (`host:port`, `[v6]:port`), if any. */
type HostColumn = { host: string; port?: string } | { error: string };

function splitHostColumn(token: string): HostColumn {
  if (token.startsWith('[')) {
    const m = /^\[([^\]]*)\](?::(.*))?$/s.exec(token);
    if (!m) return { error: `${quote(token)} is neither [ipv6] nor [ipv6]:port` };
    const error = checkIPv6(m[1]!);
    return error ? { error } : m[2] === undefined ? { host: m[1]! } : { host: m[1]!, port: m[2] };
  }
  const colon = token.indexOf(':');
  if (colon < 0) return { host: token };
  // Two or more colons can only be a bare IPv6 address (checked as a host); a port then needs its own column.
  if (token.indexOf(':', colon + 1) >= 0) return { host: token };
  return { host: token.slice(0, colon), port: token.slice(colon + 1) };
}

interface Line {
  endpoint?: Endpoint;
  errors: string[];
  warnings: string[];
}

/** A first column with a scheme (`https://…`) is a service's base URL; anything else a host. */
const URL_LINE = /^[a-z][a-z0-9+.-]*:\/\//i;

function parseLine(tokens: string[]): Line {
  return URL_LINE.test(tokens[0]!) ? parseUrlLine(tokens) : parseHostLine(tokens);
}

/**
 * One non-blank, non-comment line: `host [port] key=value...`. As in Aurora-Swarm the second
 * column is a port only when it is all digits; otherwise it is the first tag.
 */
function parseHostLine(tokens: string[]): Line {
  const errors: string[] = [];
  const warnings: string[] = [];
  const column = splitHostColumn(tokens[0]!);
  const rest = tokens.slice(1);
  let portText: string | undefined;
  let host = '';
  if ('error' in column) {
    errors.push(column.error);
  } else {
    host = column.host;
    const hostError = checkHost(host);
    if (hostError) errors.push(hostError);
    portText = column.port;
  }
  const portColumn = rest.length > 0 && /^[0-9]+$/.test(rest[0]!) ? rest.shift() : undefined;
  if (portColumn !== undefined) {
    if (portText !== undefined) errors.push(`port given twice: in ${quote(tokens[0]!)} and as column ${quote(portColumn)}`);
    else portText = portColumn;
  }
  let port = DEFAULT_PORT;
  if (portText !== undefined) {
    const checked = checkPort(portText);
    if ('error' in checked) errors.push(checked.error);
    else port = checked.port;
  }
  const { tags, key } = readTags(rest, portText === undefined, errors, warnings);
  if (errors.length > 0) return { errors, warnings };
  // fromEntries defines own properties, so even a "__proto__" key is kept as a tag.
  return { endpoint: { host, port, tags: Object.fromEntries(tags), ...(key ? { key } : {}) }, errors, warnings };
}

/** `https://host[:port]/path/v1 key=value...`: an OpenAI-compatible service; its port is in its URL. */
function parseUrlLine(tokens: string[]): Line {
  const errors: string[] = [];
  const warnings: string[] = [];
  const checked = checkBaseUrl(tokens[0]!);
  const rest = tokens.slice(1);
  if (rest.length > 0 && /^[0-9]+$/.test(rest[0]!)) errors.push(`a base URL carries its own port (https://host:${rest.shift()}/…), not a port column`);
  const { tags, key } = readTags(rest, false, errors, warnings);
  if ('error' in checked) errors.push(checked.error);
  if (errors.length > 0 || 'error' in checked) return { errors, warnings };
  if (key && checked.url.startsWith('http:') && !isLoopback(checked.host)) warnings.push(`${checked.url} is plain http: its key would cross the network unencrypted; use https`);
  const { url, host, port } = checked;
  return { endpoint: { host, port, tags: Object.fromEntries(tags), url, ...(key ? { key } : {}) }, errors, warnings };
}

/** The `key=value` columns: tags, and `key=` — where the endpoint's key is kept, never the key itself. */
function readTags(tokens: readonly string[], portMissing: boolean, errors: string[], warnings: string[]): { tags: Map<string, string>; key?: KeyRef } {
  const tags = new Map<string, string>();
  let key: KeyRef | undefined;
  for (const [i, token] of tokens.entries()) {
    const eq = token.indexOf('=');
    if (eq < 0) {
      // Aurora-Swarm silently drops such tokens; a typo in a tag should not vanish.
      errors.push(i === 0 && portMissing ? `${quote(token)} is neither a port nor a key=value tag` : `tag ${quote(token)} is not key=value`);
      continue;
    }
    const name = token.slice(0, eq);
    const value = token.slice(eq + 1);
    const error = checkTag(name, value) ?? keyLikeTag(name);
    if (error) {
      errors.push(error);
      continue;
    }
    if (name === 'key') {
      const ref = checkKeyRef(value);
      if ('error' in ref) errors.push(ref.error);
      else if (key) warnings.push('key= given twice; the last one wins');
      if ('ref' in ref) key = ref.ref;
      continue;
    }
    if (tags.has(name)) warnings.push(`tag ${quote(name)} given twice; the last value wins`);
    tags.set(name, value);
  }
  return key ? { tags, key } : { tags };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** Identity for duplicate detection: case-insensitive, trailing dot ignored, IPv6 canonicalised. */
function endpointKey(ep: Endpoint): string {
  if (ep.url) return ep.url;
  const host = ep.host.includes(':') ? new URL(`http://[${ep.host}]/`).hostname : ep.host.replace(/\.$/, '');
  return `${host.toLowerCase()} ${ep.port}`;
}

/**
 * Parses hostfile text (Aurora-Swarm's TAB-separated format, plus the older `host:port` and
 * `[ipv6]:port` forms and any whitespace as separator). Never throws: every problem on every
 * line is collected. Duplicate endpoints (same host, case-insensitive, and port) are warnings,
 * not errors. File order is kept as in Aurora-Swarm, but where Aurora-Swarm keeps both copies we
 * drop the later one ("duplicate of line N"), so no server gets twice its share of the work.
 */
export function parseHostfile(text: string, file = '<hostfile>'): ParsedHostfile {
  const result: ParsedHostfile = { endpoints: [], errors: [], warnings: [], lines: [] };
  const firstLine = new Map<string, number>();
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  source.split('\n').forEach((raw, i) => {
    const lineNo = i + 1;
    const line = raw.trim(); // also drops the CR of CRLF
    if (line === '' || line.startsWith('#')) return;
    const parsed = parseLine(line.split(/\s+/));
    // One junk line (a binary file) can hold a million bad tokens: a few say enough about it.
    const extra = parsed.errors.length - ERRORS_PER_LINE;
    for (const message of parsed.errors.slice(0, ERRORS_PER_LINE)) result.errors.push(makeIssue(file, lineNo, message));
    if (extra > 0) result.errors.push(makeIssue(file, lineNo, `… and ${extra.toLocaleString('en-US')} more problems on this line`));
    for (const message of parsed.warnings) result.warnings.push(makeIssue(file, lineNo, message));
    const ep = parsed.endpoint;
    if (!ep) return;
    const key = endpointKey(ep);
    const seen = firstLine.get(key);
    if (seen !== undefined) {
      result.warnings.push(makeIssue(file, lineNo, `${endpointId(ep)} is a duplicate of line ${seen}; dropped`));
      return;
    }
    firstLine.set(key, lineNo);
    result.endpoints.push(ep);
    result.lines.push(lineNo);
  });
  // Lines with errors already explain an empty result; "no endpoints" is for files with none at all.
  if (result.endpoints.length === 0 && result.errors.length === 0) result.errors.push(makeIssue(file, 0, 'no endpoints'));
  return result;
}

/** One line of a hostfile: always the real compute node, whatever route reaches it. */
export interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly tags: Readonly<Record<string, string>>;
}

/** `host:port`, with brackets around IPv6 literals, as results and logs name an endpoint. */
export function endpointId(ep: Pick<Endpoint, 'host' | 'port'>): string {
  return ep.host.includes(':') ? `[${ep.host}]:${ep.port}` : `${ep.host}:${ep.port}`;
}

/** The http origin of an address (an endpoint, or the local end of a tunnel). */
export function originOf(addr: Pick<Endpoint, 'host' | 'port'>): string {
  return `http://${endpointId(addr)}`;
}

/** Parses `key=value` as given to `--tag`; throws on a token without `=`. */
export function parseTagFilter(spec: string): [string, string] {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new Error(`tag filter "${spec}" must look like key=value`);
  return [spec.slice(0, eq), spec.slice(eq + 1)];
}

export function matchesTags(ep: Endpoint, filters: ReadonlyArray<[string, string]>): boolean {
  return filters.every(([k, v]) => ep.tags[k] === v);
}

/** Where an endpoint's key is kept, by name (`key=env:NAME`, `key=secret:NAME`): a hostfile never holds the key itself. */
export interface KeyRef {
  readonly from: 'env' | 'secret';
  readonly name: string;
}

/** One line of a hostfile: always the real compute node (or service), whatever route reaches it. */
export interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly tags: Readonly<Record<string, string>>;
  /**
   * A service's base URL (`https://host/path/v1`), when the line gave one: its requests go under its
   * path, over TLS for https, and it names the endpoint in results and logs.
   */
  readonly url?: string;
  /** The key this endpoint takes, by reference; without one, the swarm's own key (if any) is sent. */
  readonly key?: KeyRef;
}

/** An endpoint's address as results and logs name it: its base URL, else `host:port` (brackets around IPv6 literals). */
export function endpointId(ep: Pick<Endpoint, 'host' | 'port' | 'url'>): string {
  if (ep.url) return ep.url;
  return ep.host.includes(':') ? `[${ep.host}]:${ep.port}` : `${ep.host}:${ep.port}`;
}

/** The origin of an address (an endpoint, or the local end of a tunnel): its base URL's, else plain http. */
export function originOf(addr: Pick<Endpoint, 'host' | 'port' | 'url'>): string {
  return addr.url ? new URL(addr.url).origin : `http://${endpointId(addr)}`;
}

/** `key=env:NAME` as a hostfile line writes it: safe to show, it holds no key. */
export function keyRefText(ref: KeyRef): string {
  return `key=${ref.from}:${ref.name}`;
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

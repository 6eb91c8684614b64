import { rootCertificates } from 'node:tls';
import { originOf, type Endpoint } from '../endpoints/endpoint.ts';
import type { PoolOptions } from './undici-pool.ts';

/** How an endpoint is reached: dialled directly, through an SSH forward, or through a SOCKS proxy. */
export interface Route {
  readonly kind: 'direct' | 'forward' | 'socks';
  readonly origin: string;
  readonly connect?: PoolOptions['connect'];
  /** What carries it, for logs and the tree: `ssh forward 127.0.0.1:41234`, `socks 127.0.0.1:1080`. */
  readonly via?: string;
  /** A service's base URL path (`/path/v1`): every request goes under it (see pathUnder). */
  readonly basePath?: string;
}

/**
 * Where a request goes on a service behind a base URL, which is what the OpenAI SDK takes as
 * `baseURL` (`https://host/path/v1`): the API's own paths (`/v1/completions`) under it, the server's
 * other routes (`/health`, `/tokenize`, `/metrics`, `/version`) under what is left of it without its
 * `/v1` — where vLLM behind a proxy serves them.
 */
export function pathUnder(basePath: string, path: string): string {
  if (path === '/v1' || path.startsWith('/v1/')) return basePath + path.slice(3);
  return (basePath.endsWith('/v1') ? basePath.slice(0, -3) : basePath) + path;
}

/**
 * An endpoint dialled at its own address: a plain one over http, a service at its base URL's origin
 * with its path. `ca` (PEM) is trusted on top of Node's bundled roots, for a service whose
 * certificate a site CA signed; the certificate is always verified.
 */
export function directRoute(endpoint: Endpoint, ca?: string): Route {
  const origin = originOf(endpoint);
  if (!endpoint.url) return { kind: 'direct', origin };
  const basePath = new URL(endpoint.url).pathname.replace(/\/+$/, '');
  const tls = ca !== undefined && origin.startsWith('https:') ? { connect: { ca: [...rootCertificates, ca] } } : {};
  return { kind: 'direct', origin, ...(basePath ? { basePath } : {}), ...tls };
}

/**
 * An OpenAI-compatible service as the internet serves one, for tests: HTTPS with a certificate of a
 * test CA made here with Debian's `openssl` (plain http without one: the extension host cannot be
 * told of a CA once started), a base URL path (`/resource_server/sim/v1`), Bearer keys checked by the
 * gateway (and revoked at will, as a Globus token expires), in front of a real `swarm sim` server
 * reached over loopback http.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface TestCa {
  /** PEM files: the CA's certificate (what a client trusts), the server's key and certificate. */
  caFile: string;
  key: string;
  cert: string;
}

/** A CA and a certificate it signs for localhost and 127.0.0.1, written in `dir`. */
export function makeTestCa(dir: string, name = 'test'): TestCa {
  const file = (f: string) => join(dir, `${name}-${f}`);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', `/CN=Swarm Lab ${name} CA`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  ssl('req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=localhost');
  writeFileSync(file('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  ssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '2', '-extfile', file('ext.cnf'));
  return { caFile: file('ca.pem'), key: readFileSync(file('server.key'), 'utf8'), cert: readFileSync(file('server.pem'), 'utf8') };
}

export interface GatewayOptions {
  /** The sim server behind it, `http://127.0.0.1:PORT`. */
  target: string;
  /** Without one, plain http. */
  ca?: TestCa;
  /** Keys it takes now; the test adds and deletes (expires) them while it runs. */
  keys: Set<string>;
  /** The path its API lives under: requests to `${prefix}/v1/…` reach the sim's `/v1/…`. */
  prefix?: string;
  /** Only the API is served (the sim's `/health`, `/tokenize`, `/metrics`, `/version` answer 404), as most services do. */
  apiOnly?: boolean;
}

export interface Gateway {
  /** `https://127.0.0.1:PORT/prefix/v1` (http without a CA): what a hostfile line gives. */
  baseUrl: string;
  /** Every request it had: `STATUS PATH` as the client asked (with the prefix). */
  seen: string[];
  /** How many it refused with 401 or 403. */
  refusals(): number;
  close(): Promise<void>;
}

export async function tlsGateway(options: GatewayOptions): Promise<Gateway> {
  const prefix = options.prefix ?? '/resource_server/sim';
  const seen: string[] = [];
  const answer = (res: ServerResponse, path: string, status: number, body: unknown) => {
    seen.push(`${status} ${path}`);
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    if (!path.startsWith(`${prefix}/`)) return answer(res, path, 404, { detail: 'Not Found' });
    const inner = path.slice(prefix.length);
    if (options.apiOnly && !inner.startsWith('/v1/')) return answer(res, path, 404, { detail: 'Not Found' });
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer) return answer(res, path, 401, { error: { message: 'missing access token', type: 'Unauthorized' } });
    if (!options.keys.has(bearer)) return answer(res, path, 401, { error: { message: 'access token expired or invalid', type: 'Unauthorized' } });
    const headers = { ...req.headers };
    delete headers.authorization;
    delete headers.host;
    const upstream = httpRequest(`${options.target}${inner}`, { method: req.method, headers }, (up) => {
      seen.push(`${up.statusCode} ${path}`);
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => answer(res, path, 502, { error: { message: 'upstream failed' } }));
    req.pipe(upstream);
  };
  const server = options.ca ? createHttpsServer({ key: options.ca.key, cert: options.ca.cert }, handle) : createHttpServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `${options.ca ? 'https' : 'http'}://127.0.0.1:${port}${prefix}/v1`,
    seen,
    refusals: () => seen.filter((s) => /^40[13] /.test(s)).length,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

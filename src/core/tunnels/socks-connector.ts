import type { Socket } from 'node:net';
import { SocksClient } from 'socks';
import type { buildConnector } from 'undici';

/**
 * An undici connector that reaches `target` through a SOCKS5 proxy (ssh -D). Failures are told
 * apart: the proxy itself unreachable is the tunnel's fault (`ETUNNEL`); the proxy reporting the
 * target refused or unreachable means the endpoint is down (`ECONNREFUSED`).
 */
export function socksConnector(proxy: { host: string; port: number }, target: { host: string; port: number }, timeoutMs = 10_000): buildConnector.connector {
  return (_options, callback) => {
    SocksClient.createConnection({
      proxy: { host: proxy.host, port: proxy.port, type: 5 },
      command: 'connect',
      destination: { host: target.host, port: target.port },
      timeout: timeoutMs,
    }).then(
      ({ socket }) => {
        (socket as Socket).setNoDelay(true);
        callback(null, socket as Socket);
      },
      (err: Error) => callback(classify(err, proxy), null),
    );
  };
}

function classify(err: Error, proxy: { host: string; port: number }): Error {
  const rejected = /rejected connection|Socks5 proxy rejected|closed|Host ?unreachable|Connection ?refused|General/i.test(err.message) && !/ECONNREFUSED/.test(err.message);
  const code = rejected ? 'ECONNREFUSED' : 'ETUNNEL';
  const message = rejected ? `the SOCKS proxy could not reach the endpoint: ${err.message}` : `SOCKS proxy ${proxy.host}:${proxy.port} unreachable: ${err.message}`;
  return Object.assign(new Error(message, { cause: err }), { code });
}

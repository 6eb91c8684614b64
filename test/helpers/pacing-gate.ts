/**
 * A gate in front of simulated servers that lets generation requests through only as the test allows,
 * so a run is "still going" or "moving" because the test says so, not because it is slow enough on
 * this machine today (a run paced by latency finished before the check under load 20, and was too
 * short to catch on a quiet machine). Everything else (health, models, metrics) passes freely.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PacingGate {
  /** The hostfile's lines for the gated servers, `127.0.0.1<TAB>port`, in the targets' order. */
  lines: string[];
  /** Lets `n` more generation requests through (those waiting first, in arrival order). */
  allow(n: number): void;
  /** Lets every request through from now on. */
  open(): void;
  /** Holds every request from now on, until `allow` or `open`. */
  hold(): void;
  /** Generation requests let through so far. */
  passed(): number;
  close(): Promise<void>;
}

/** `targets`: `host:port` of each server behind the gate, one gate port each. */
export async function pacingGate(targets: readonly string[]): Promise<PacingGate> {
  let quota = 0;
  let passed = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    while (quota > 0 && waiting.length) {
      quota--;
      waiting.shift()!();
    }
  };
  const forward = (target: string, req: IncomingMessage, res: ServerResponse) => {
    const headers = { ...req.headers };
    delete headers.host;
    const upstream = httpRequest(`http://${target}${req.url ?? '/'}`, { method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };
  const servers: Server[] = [];
  for (const target of targets) {
    const server = createServer((req, res) => {
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/')) return forward(target, req, res);
      // Held: the body stays unread in the socket until its turn; a client that gives up leaves the queue.
      const go = () => {
        passed++;
        forward(target, req, res);
      };
      waiting.push(go);
      res.on('close', () => {
        const at = waiting.indexOf(go);
        if (at >= 0) waiting.splice(at, 1);
      });
      release();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }
  return {
    lines: servers.map((s) => `127.0.0.1\t${(s.address() as AddressInfo).port}`),
    allow: (n) => {
      quota += n;
      release();
    },
    open: () => {
      quota = Infinity;
      release();
    },
    hold: () => {
      quota = 0;
    },
    passed: () => passed,
    close: async () => {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.closeAllConnections();
              s.close(() => resolve());
            }),
        ),
      );
    },
  };
}

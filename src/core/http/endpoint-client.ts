import { Pool, type Dispatcher } from 'undici';
import { RequestFailure, serverErrorMessage, toFailure } from './failure.ts';

/**
 * How to reach an endpoint: its own address, a tunnel's local end (`forward`), or its own address
 * through a SOCKS proxy (`socks`, with a connector). The endpoint keeps its identity everywhere else.
 */
export interface Route {
  readonly kind: 'direct' | 'forward' | 'socks';
  readonly origin: string;
  readonly connect?: Pool.Options['connect'];
  /** What carries it, for logs and the tree: `ssh forward 127.0.0.1:41234`, `socks 127.0.0.1:1080`. */
  readonly via?: string;
}

export interface ClientLimits {
  connections: number;
  keepAliveTimeoutMs: number;
  connectTimeoutMs: number;
}

export interface Exchange<T> {
  status: number;
  body: T;
  /** `performance.now()` when the request left and when its response headers arrived. */
  sentAt: number;
  firstByteAt: number;
}

/**
 * One endpoint's own undici dispatcher (never the global one): keep-alive, bounded connections,
 * and per-request header/body timeouts so undici's 300 s default never cuts a long batch.
 */
export class EndpointClient {
  private readonly pool: Pool;
  private readonly viaForward: boolean;

  constructor(
    route: Route,
    limits: ClientLimits,
    private readonly headers: Record<string, string>,
  ) {
    this.viaForward = route.kind === 'forward';
    this.pool = new Pool(route.origin, {
      connections: limits.connections,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectTimeout: limits.connectTimeoutMs,
      ...(route.connect ? { connect: route.connect } : {}),
    });
  }

  /** JSON in, JSON out; any non-2xx becomes a RequestFailure carrying the server's message. */
  async json<T>(method: 'GET' | 'POST', path: string, payload: unknown, timeoutMs: number, signal?: AbortSignal): Promise<Exchange<T>> {
    const ex = await this.send(method, path, payload, timeoutMs, signal);
    if (ex.status < 200 || ex.status >= 300) {
      throw new RequestFailure('http', serverErrorMessage(ex.status, ex.body), ex.status);
    }
    try {
      return { ...ex, body: JSON.parse(ex.body) as T };
    } catch {
      throw new RequestFailure('protocol', `invalid JSON from ${path}: ${ex.body.slice(0, 120)}`);
    }
  }

  /** Raw exchange: the status and text body, whatever the status. */
  async send(method: 'GET' | 'POST', path: string, payload: unknown, timeoutMs: number, signal?: AbortSignal): Promise<Exchange<string>> {
    const deadline = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const sentAt = performance.now();
    const options: Dispatcher.RequestOptions = {
      method,
      path,
      headers: payload === undefined ? this.headers : { ...this.headers, 'content-type': 'application/json' },
      signal: combined,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    };
    if (payload !== undefined) options.body = JSON.stringify(payload);
    try {
      const res = await this.pool.request(options);
      const firstByteAt = performance.now();
      const body = await res.body.text();
      return { status: res.statusCode, body, sentAt, firstByteAt };
    } catch (err) {
      throw toFailure(err, deadline.aborted && !signal?.aborted, timeoutMs, this.viaForward);
    }
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}

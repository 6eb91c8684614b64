import { connect } from 'node:net';
import type { Dispatcher } from 'undici';
import { Client, Pool, type PoolOptions, type WrittenOptions } from './undici-pool.ts';
import { pathUnder, type Route } from './base-url.ts';
import type { Credential, IssuedKey } from './credential.ts';
import { httpFailure, RequestFailure, toFailure, type Deadlines } from './failure.ts';
import type { RequestSignal } from './abort.ts';
import type { Meter } from './request-meter.ts';
import { readEvents } from './sse.ts';
import { readWhole } from './whole-body.ts';

/**
 * How to reach an endpoint: its own address, a tunnel's local end (`forward`), or its own address
 * through a SOCKS proxy (`socks`, with a connector). The endpoint keeps its identity everywhere else.
 */
export interface ClientLimits {
  connections: number;
  keepAliveTimeoutMs: number;
  connectTimeoutMs: number;
}

export interface Exchange<T> {
  status: number;
  body: T;
  /** The response's `Retry-After`, if any. */
  retryAfter?: string | string[];
  /** `performance.now()` when the request left and when its response headers arrived. */
  sentAt: number;
  firstByteAt: number;
}

/** What a JSON exchange may also be given: when the response began, the meter that counts it, the most bytes its body may have. */
export interface ExchangeExtras {
  onHeaders?: (at: number) => void;
  meter?: Meter;
  /** Over this, the body is cut off and the request fails (the endpoint's fault: another may answer). */
  maxBytes?: number;
  /** The path the meter counts it under, when not its own (a probe of a generation route). */
  countAs?: string;
}

/** A request that left: its response (read as `exchange` reads it), when it left, and the key it carried. */
interface Sent<R> {
  res: R;
  sentAt: number;
  key: IssuedKey | undefined;
}

/** When a streamed exchange's request left and its headers arrived (`performance.now()`). */
export interface StreamTimes {
  sentAt: number;
  firstByteAt: number;
}

/**
 * One endpoint's own undici dispatcher (never the global one): keep-alive, bounded connections,
 * and per-request header/body timeouts so undici's 300 s default never cuts a long batch. The
 * deadline is undici's own (no timer or AbortSignal of ours per request). With a credential, each
 * request carries its current key; a key refused (401) after it worked is fetched again once and
 * the request sent again. A refusal that stands (401, 403 on the API's `/v1` paths) is kept: the
 * endpoint is sent nothing more, so a refused key is never retried into a lock-out.
 */
export class EndpointClient {
  /** Made on first use and dropped by `release`: 10,000 endpoints' pools, most of them down, held ~500 MB. */
  private dispatcher: Pool | Client | null = null;
  /** The endpoint has answered a request (any status): it gets a Pool from now on. */
  private answered = false;
  private readonly poolOptions: PoolOptions;
  private readonly viaForward: boolean;
  /** Dialled at its own address with a plain TCP connect (no tunnel, no proxy): a bare connect can tell whether it listens. */
  private readonly dialled: boolean;
  private readonly basePath: string;
  private readonly jsonHeaders: Record<string, string>;
  private readonly connectTimeoutMs: number;
  private denial: RequestFailure | null = null;

  /** `id`: the endpoint's own `host:port` (or base URL), under which a meter counts its requests. */
  constructor(
    route: Route,
    limits: ClientLimits,
    private readonly headers: Record<string, string>,
    private readonly id = route.origin,
    private readonly credential?: Credential,
  ) {
    this.viaForward = route.kind === 'forward';
    this.dialled = route.kind === 'direct';
    this.basePath = route.basePath ?? '';
    this.jsonHeaders = { ...headers, 'content-type': 'application/json' };
    this.connectTimeoutMs = limits.connectTimeoutMs;
    this.poolOptions = {
      connections: limits.connections,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectTimeout: limits.connectTimeoutMs,
      ...(route.connect ? { connect: route.connect } : {}),
    };
    this.origin = route.origin;
  }

  private readonly origin: string;

  /**
   * The dispatcher for the next request. Until the endpoint first answers, one connection (undici's
   * Client): a Pool's request queue alone is a 16 KB array — 160 MB, and most of a start's garbage
   * collection, for 10,000 endpoints of which most are down. Once it has answered, a Pool with the
   * connections a run needs; the first connection finishes what it carries and closes.
   */
  private get pool(): Pool | Client {
    const current = this.dispatcher;
    if (current && (current instanceof Pool || !this.answered)) return current;
    if (current) void current.close().catch(() => undefined);
    const { connections: _, ...one } = this.poolOptions;
    return (this.dispatcher = this.answered ? new Pool(this.origin, this.poolOptions) : new Client(this.origin, one));
  }

  /** Lets go of the connections' memory (the endpoint is down and nothing is in flight to it); the next request makes them again. */
  release(): void {
    const dispatcher = this.dispatcher;
    this.dispatcher = null;
    void dispatcher?.destroy().catch(() => undefined);
  }

  /**
   * Whether something listens at the endpoint's address, by a bare TCP connect closed at once; throws
   * the failure a request would have met (refused, timed out, unreachable). The pool asks before its
   * first request to an endpoint it has never reached: where thousands of a hostfile's servers are not
   * up yet, a refused bare connect costs a third of what the HTTP client's failed request does
   * (undici's client, request and errors for each). Tunnels and proxies always accept (their far end
   * says), so a routed endpoint is not probed.
   */
  async reachable(): Promise<void> {
    if (!this.dialled || this.answered) return;
    const url = new URL(this.origin);
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host, port, timeout: this.connectTimeoutMs });
      socket.once('connect', () => (socket.destroy(), resolve()));
      socket.once('timeout', () => (socket.destroy(), reject(Object.assign(new Error('connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' }))));
      socket.once('error', (err) => (socket.destroy(), reject(err)));
    }).catch((err: unknown) => {
      throw this.failure(err, this.connectTimeoutMs, undefined);
    });
  }

  /** JSON in, JSON out; any non-2xx becomes a RequestFailure carrying the server's message. */
  async json<T>(method: 'GET' | 'POST', path: string, payload: unknown, timeoutMs: number, signal?: RequestSignal, extras?: ExchangeExtras): Promise<Exchange<T>> {
    const ex = await this.send(method, path, payload, timeoutMs, signal, extras);
    if (ex.status < 200 || ex.status >= 300) throw refusing(path, ex.status) ? this.refusal() : httpFailure(ex.status, ex.body, ex.retryAfter);
    try {
      return { ...ex, body: JSON.parse(ex.body) as T };
    } catch {
      // Cut short, compressed, or not JSON at all: the body was garbled on its way (a proxy, a dying server), as a reset is.
      throw new RequestFailure('reset', `invalid JSON from ${path}: ${ex.body.slice(0, 120)}`, undefined, { garbled: true });
    }
  }

  /** Raw exchange: the status and text body, whatever the status. */
  async send(method: 'GET' | 'POST', path: string, payload: unknown, timeoutMs: number, signal?: RequestSignal, extras: ExchangeExtras = {}): Promise<Exchange<string>> {
    try {
      const whole = { maxBytes: extras.maxBytes ?? Infinity, path, onHeaders: extras.onHeaders };
      const read = (dispatcher: Pool | Client, options: WrittenOptions) => readWhole(dispatcher, options, signal, whole);
      const { res, sentAt, key } = await this.request(method, path, payload, timeoutMs, timeoutMs, signal, extras.meter, extras.countAs, read, noDiscard);
      if (refusing(path, res.statusCode)) this.refuse(httpFailure(res.statusCode, res.body), key);
      return { status: res.statusCode, body: res.body, sentAt, firstByteAt: res.firstByteAt, retryAfter: res.retryAfter };
    } catch (err) {
      throw this.failure(err, timeoutMs, signal);
    }
  }

  /**
   * `POST` with `stream: true`: each server-sent event's JSON goes to `onEvent` as it arrives.
   * Headers must come within `timeoutMs`; the body has no deadline of ours (a long batch streams for
   * as long as it generates) — the caller watches for stalls and aborts through `signal`. Resolves
   * with whether `[DONE]` came: a stream that ended without it may still have said all it had to.
   */
  async stream(path: string, payload: unknown, timeoutMs: number, signal: RequestSignal, onEvent: (event: unknown, at: number) => void, onHeaders?: (times: StreamTimes) => void, meter?: Meter): Promise<StreamTimes & { done: boolean }> {
    try {
      const { res, sentAt, key } = await this.request('POST', path, payload, timeoutMs, 0, signal, meter, undefined, asStream, dumped);
      const times = { sentAt, firstByteAt: performance.now() };
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const failure = httpFailure(res.statusCode, await res.body.text(), res.headers['retry-after']);
        if (!refusing(path, res.statusCode)) throw failure;
        this.refuse(failure, key);
        throw this.refusal();
      }
      onHeaders?.(times);
      const complete = await readEvents(res.body, (data, at) => {
        let event: unknown;
        try {
          event = JSON.parse(data);
        } catch {
          throw new RequestFailure('protocol', `invalid JSON in the event stream of ${path}: ${data.slice(0, 120)}`);
        }
        onEvent(event, at);
      });
      return { ...times, done: complete };
    } catch (err) {
      throw this.failure(err, timeoutMs, signal);
    }
  }

  /**
   * One request with the current key, made by `exchange` (read whole, or as a stream). A 401 on the
   * API once the key has worked means it expired: the credential fetches a fresh one (once, shared by
   * every request refused at the same time), `discard` lets the refused answer go, and the request
   * goes again with it. The meter counts every request that left: once written whole. Without a
   * credential it is one exchange, chained rather than awaited (individual mode sends one per prompt).
   */
  private request<R extends { statusCode: number }>(
    method: 'GET' | 'POST',
    path: string,
    payload: unknown,
    headersMs: number,
    bodyMs: number,
    signal: RequestSignal | undefined,
    meter: Meter | undefined,
    countAs: string | undefined,
    exchange: (dispatcher: Pool | Client, options: WrittenOptions) => Promise<R>,
    discard: (res: R) => Promise<void>,
  ): Promise<Sent<R>> {
    if (this.denial) return Promise.reject(this.refusal());
    const once = (key: IssuedKey | undefined): Promise<Sent<R>> => {
      const options: WrittenOptions = this.options(method, path, payload, headersMs, bodyMs, signal, key);
      if (meter) options.onWritten = () => meter.sent(this.id, countAs ?? path);
      const sentAt = performance.now();
      return exchange(this.pool, options).then((res) => {
        this.answered = true;
        return { res, sentAt, key };
      });
    };
    return this.credential ? this.keyed(isApiPath(path), once, discard) : once(undefined);
  }

  /** `once` with the credential's current key, and again with a fresh one when the API refused a key that had worked. */
  private async keyed<R extends { statusCode: number }>(api: boolean, once: (key: IssuedKey) => Promise<Sent<R>>, discard: (res: R) => Promise<void>): Promise<Sent<R>> {
    const credential = this.credential!;
    for (let again = true; ; again = false) {
      const sent = await once(await credential.current());
      const { res, key } = sent;
      if (api && res.statusCode === 401 && again && (await credential.refused(key!.issue))) {
        await discard(res);
        continue;
      }
      if (api && res.statusCode >= 200 && res.statusCode < 300) credential.worked(key!.issue);
      return sent;
    }
  }

  /** Keeps a refusal that stands, saying whose key it was: from now on every request fails with it, unsent. */
  private refuse(failure: RequestFailure, key: IssuedKey | undefined): void {
    const whose = key ? this.credential!.refusal(key.issue) : this.headers.authorization ? 'the key sent was refused' : 'no key was sent';
    this.denial ??= new RequestFailure('http', `${failure.message} (${whose}; ${this.id} is sent nothing more)`, failure.status, { type: failure.errorType, param: failure.param });
  }

  /** The kept refusal, a fresh copy each time (callers note their attempts on it). */
  private refusal(): RequestFailure {
    const d = this.denial!;
    return new RequestFailure('http', d.message, d.status, { type: d.errorType, param: d.param });
  }

  private options(method: 'GET' | 'POST', path: string, payload: unknown, headersMs: number, bodyMs: number, signal: RequestSignal | undefined, key: IssuedKey | undefined): Dispatcher.RequestOptions {
    const headers = payload === undefined ? this.headers : this.jsonHeaders;
    const options: Dispatcher.RequestOptions = {
      method,
      path: this.basePath ? pathUnder(this.basePath, path) : path,
      headers: key ? { ...headers, authorization: `Bearer ${key.value}` } : headers,
      headersTimeout: headersMs,
      bodyTimeout: bodyMs,
    };
    if (signal) options.signal = signal as NonNullable<Dispatcher.RequestOptions['signal']>;
    if (payload !== undefined) options.body = JSON.stringify(payload);
    return options;
  }

  private failure(err: unknown, timeoutMs: number, signal: RequestSignal | undefined): RequestFailure {
    // A reason the caller aborted with (a stall, a hedge that won) is the failure itself.
    if (signal?.aborted && signal.reason instanceof RequestFailure) return signal.reason;
    const deadlines: Deadlines = { requestMs: timeoutMs, connectMs: this.connectTimeoutMs };
    return toFailure(err, false, deadlines, this.viaForward);
  }

  close(): Promise<void> {
    const dispatcher = this.dispatcher;
    this.dispatcher = null;
    return dispatcher ? dispatcher.destroy() : Promise.resolve();
  }
}

/** The OpenAI API's own paths, the ones a key guards (vLLM's `--api-key` guards `/v1` alone; `/health`, `/metrics` stay open). */
function isApiPath(path: string): boolean {
  return path.startsWith('/v1/');
}

/** A refusal of our credentials where they count: on the API. A gateway's 401 on `/health` or `/metrics` says nothing of the key. */
function refusing(path: string, status: number): boolean {
  return (status === 401 || status === 403) && isApiPath(path);
}

/** undici's request API: the response's body as a stream (an event stream is read as it comes). */
const asStream = (dispatcher: Pool | Client, options: WrittenOptions): Promise<Dispatcher.ResponseData> => dispatcher.request(options);
const dumped = (res: Dispatcher.ResponseData): Promise<void> => res.body.dump();
/** A response read whole has nothing left to let go. */
const noDiscard = (): Promise<void> => Promise.resolve();

/// <reference path="./undici-parts.d.ts" />
// undici's Pool and its request API, without the package index, which also loads fetch, WebSocket,
// caches and mocks: ~50 ms of CPU at every CLI start. The index wires the API in exactly this way
// (Object.assign(Dispatcher.prototype, api)); undici is pinned exactly, so these paths hold.
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import UndiciClient from 'undici/lib/dispatcher/client.js';
import UndiciPool from 'undici/lib/dispatcher/pool.js';

Object.assign(Dispatcher.prototype, api);

/** `pool.request` options, with a call for the moment the request was written whole to its connection. */
export type WrittenOptions = Dispatcher.RequestOptions & { onWritten?: () => void };

/**
 * Tells when a request has left: its handler's `onRequestSent`, which undici calls once the body is
 * written (the request API's own handler has none). A request counted then is one the server
 * received — not one aborted while queued or connecting, nor one to a refused port — so a run's
 * request count agrees with the servers' after a cancel, a hedge or a dead endpoint.
 */
function telling(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
  const onWritten = (options as WrittenOptions).onWritten;
  if (onWritten) (handler as { onRequestSent?: () => void }).onRequestSent = onWritten;
}

/** undici's Pool (connections to one origin), telling when a request was written. */
export class Pool extends UndiciPool {
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    telling(options, handler);
    return super.dispatch(options, handler);
  }
}

/** undici's Client (one connection), telling when a request was written. */
export class Client extends UndiciClient {
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    telling(options, handler);
    return super.dispatch(options, handler);
  }
}

export type PoolOptions = UndiciPool.Options;

/// <reference path="./undici-parts.d.ts" />
// undici's Pool and its request API, without the package index, which also loads fetch, WebSocket,
// caches and mocks: ~50 ms of CPU at every CLI start. The index wires the API in exactly this way
// (Object.assign(Dispatcher.prototype, api)); undici is pinned exactly, so these paths hold.
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import Pool from 'undici/lib/dispatcher/pool.js';

Object.assign(Dispatcher.prototype, api);

export { Pool };

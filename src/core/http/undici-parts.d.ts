// Types of the undici modules that undici-pool.ts loads one by one.
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici';
  export = Pool;
}
declare module 'undici/lib/dispatcher/client.js' {
  import { Client } from 'undici';
  export = Client;
}
declare module 'undici/lib/dispatcher/dispatcher.js' {
  import { Dispatcher } from 'undici';
  export = Dispatcher;
}
declare module 'undici/lib/api/index.js' {
  const api: Record<string, unknown>;
  export = api;
}

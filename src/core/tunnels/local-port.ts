import { createServer } from 'node:net';

/** A port on 127.0.0.1 that is free right now (the OS picks it); a race with another process stays possible. */
export function freeLocalPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Hands out local ports: from `base` upwards when given, else free ones from the OS; never the same twice. */
export class PortAllocator {
  private next: number | undefined;
  private readonly given = new Set<number>();

  constructor(base?: number) {
    this.next = base;
  }

  async take(): Promise<number> {
    for (;;) {
      const port = this.next === undefined ? await freeLocalPort() : this.next++;
      if (port > 65535) throw new Error('ran out of local ports');
      if (!this.given.has(port)) {
        this.given.add(port);
        return port;
      }
    }
  }
}

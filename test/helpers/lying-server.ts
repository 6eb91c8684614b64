import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Endpoint } from '../../src/core/index.ts';

/** How a lying server misbehaves on `/v1/completions`; `ok` answers every prompt `ans:<prompt>`. */
export type Lie = 'ok' | 'error-200' | 'truncated' | 'redirect' | 'null-text' | 'body-cap' | 'stream-no-index' | 'stream-no-done' | 'busy-then-ok' | 'trickle' | 'huge';

/** How long `busy-then-ok` answers 429 with `Retry-After: 1` from its start, ms. */
export const BUSY_MS = 1_200;

export interface LyingServer {
  endpoint: Endpoint;
  /** Completions requests received, and the prompt counts of each. */
  lists: number[];
  close(): Promise<void>;
}

/** Body bytes over which `body-cap` answers 413, as a proxy's client_max_body_size does. */
export const BODY_CAP = 2_000;

/**
 * A server that lies in one way on `/v1/completions` and is honest elsewhere (`/v1/models`). Every
 * answer it does give is `ans:<prompt>`, so a row credited with another prompt's answer shows.
 */
export async function lyingServer(lie: Lie): Promise<LyingServer> {
  const lists: number[] = [];
  const started = Date.now();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/v1/models') return json(200, { object: 'list', data: [{ id: 'liar', object: 'model', max_model_len: 4096 }] });
      if (req.url === '/v1/chat/completions') {
        const { messages } = JSON.parse(raw.toString('utf8')) as { messages: Array<{ content: string }> };
        const choice = { index: 0, delta: { content: `ans:${messages.at(-1)!.content}` }, finish_reason: 'stop' };
        if (lie !== 'stream-no-done') return json(200, { choices: [{ index: 0, message: { role: 'assistant', content: choice.delta.content }, finish_reason: 'stop' }] });
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return res.end(`data: ${JSON.stringify({ choices: [choice] })}\n\n`);
      }
      if (req.url !== '/v1/completions') return json(404, { detail: 'Not Found' });
      const body = JSON.parse(raw.toString('utf8')) as { prompt: string[]; stream?: boolean };
      lists.push(body.prompt.length);
      const choices = body.prompt.map((p, index) => ({ index, text: `ans:${p}`, finish_reason: 'stop' }));
      switch (lie) {
        case 'error-200':
          return json(200, { error: { message: 'upstream model crashed', type: 'InternalServerError' } });
        case 'truncated': {
          const text = JSON.stringify({ choices });
          return res.writeHead(200, { 'content-type': 'application/json' }).end(text.slice(0, text.length >> 1));
        }
        case 'redirect':
          return res.writeHead(307, { location: 'http://elsewhere/v1/completions' }).end();
        case 'null-text':
          return json(200, { choices: choices.map((c, i) => (body.prompt[i]!.includes('NULL') ? { ...c, text: null } : c)) });
        case 'body-cap':
          if (raw.length > BODY_CAP) return res.writeHead(413, { 'content-type': 'text/html' }).end('<html><body><h1>413 Request Entity Too Large</h1></body></html>');
          return json(200, { choices });
        case 'trickle': {
          // Headers at once, then a byte of the body every 100 ms: each chunk is in time, the whole never is.
          res.writeHead(200, { 'content-type': 'application/json' });
          const text = JSON.stringify({ choices });
          let at = 0;
          const timer = setInterval(() => (at < text.length ? res.write(text[at++]!) : (clearInterval(timer), res.end())), 100);
          res.on('close', () => clearInterval(timer));
          return;
        }
        case 'huge': {
          // Valid JSON, 64 MB of it, for answers of a few tokens.
          const padding = 'x'.repeat(2 ** 20);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(`{"padding":[`);
          for (let i = 0; i < 64; i++) res.write(`${i ? ',' : ''}"${padding}"`);
          return res.end(`],"choices":${JSON.stringify(choices)}}`);
        }
        case 'busy-then-ok':
          if (Date.now() - started < BUSY_MS) return res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }).end('{"error":{"message":"busy","type":"TooManyRequests"}}');
          return json(200, { choices });
        case 'stream-no-done': {
          // Every choice finishes, and the stream ends without [DONE] (a proxy that drops the tail).
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const c of choices) res.write(`data: ${JSON.stringify({ choices: [c] })}\n\n`);
          return res.end();
        }
        case 'stream-no-index': {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const c of choices) res.write(`data: ${JSON.stringify({ choices: [{ text: c.text, finish_reason: 'stop' }] })}\n\n`);
          return res.end('data: [DONE]\n\n');
        }
        default:
          if (!body.stream) return json(200, { choices });
          // Streamed honestly: every choice with its index, then [DONE].
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const c of choices) res.write(`data: ${JSON.stringify({ choices: [c] })}\n\n`);
          return res.end('data: [DONE]\n\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: { host: '127.0.0.1', port, tags: {} },
    lists,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

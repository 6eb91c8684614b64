import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Endpoint } from '../../src/core/index.ts';

/** A third-party server we do not control, as tests need one: started on loopback, closed by `close()`. */
export interface OddServer {
  endpoint: Endpoint;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible server that ignores `n`, as Aurora-Swarm's own mock servers (tests/conftest.py)
 * and several other servers do: one choice per prompt, answering `echo <prompt>`.
 */
export function ignoringN(): Promise<OddServer> {
  return echoServer(false);
}

/**
 * The same echo server, but each completion's body trickles: the headers and the body's first half
 * at once, the rest `bodyDelayMs` later — an answered request whose bytes are slow to arrive.
 */
export function slowBody(bodyDelayMs: number): Promise<OddServer> {
  return echoServer(true, bodyDelayMs);
}

async function echoServer(honourN: boolean, bodyDelayMs = 0): Promise<OddServer> {
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (d: string) => (raw += d));
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as { prompt?: string | string[]; messages?: Array<{ content: string }>; n?: number }) : {};
      const send = (payload: unknown) => {
        const text = JSON.stringify(payload);
        res.writeHead(200, { 'content-type': 'application/json' });
        if (!bodyDelayMs || req.url === '/v1/models') return res.end(text);
        res.write(text.slice(0, text.length >> 1));
        setTimeout(() => res.end(text.slice(text.length >> 1)), bodyDelayMs);
      };
      if (req.url === '/v1/models') return send({ object: 'list', data: [{ id: 'odd', object: 'model' }] });
      if (req.url === '/v1/completions') {
        const list = Array.isArray(body.prompt) ? body.prompt : [body.prompt ?? ''];
        const n = honourN ? (body.n ?? 1) : 1;
        return send({ object: 'text_completion', choices: list.flatMap((p, i) => Array.from({ length: n }, (_, k) => ({ index: i * n + k, text: `echo ${p}`, finish_reason: 'stop' }))) });
      }
      if (req.url === '/v1/chat/completions') {
        const content = `echo ${body.messages?.at(-1)?.content ?? ''}`;
        return send({ object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: { host: '127.0.0.1', port, tags: {} },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined),
  };
}

/**
 * A server whose chat template rewrites what it is given (it upper-cases the user's content), so no
 * skeleton can stand for it: `/tokenize` renders `<u>CONTENT</u>>` as one token per character (pieces
 * are the characters), completions and chat echo what the model read.
 */
export async function rewritingTemplate(): Promise<OddServer & { requests: Map<string, number> }> {
  const requests = new Map<string, number>();
  const render = (messages: Array<{ role: string; content: string }>) => messages.map((m) => `<${m.role[0]}>${m.role === 'user' ? m.content.toUpperCase() : m.content}</${m.role[0]}>`).join('') + '>';
  const ids = (text: string) => [...text].map((c) => c.codePointAt(0)!);
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (d: string) => (raw += d));
    req.on('end', () => {
      requests.set(req.url!, (requests.get(req.url!) ?? 0) + 1);
      const body = raw ? (JSON.parse(raw) as { prompt?: Array<string | number[]>; messages?: Array<{ role: string; content: string }> }) : {};
      const send = (payload: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      if (req.url === '/v1/models') return send({ object: 'list', data: [{ id: 'odd', object: 'model' }] });
      if (req.url === '/tokenize') {
        const text = body.messages ? render(body.messages) : String(body.prompt ?? '');
        return send({ count: text.length, tokens: ids(text), token_strs: [...text] });
      }
      if (req.url === '/v1/completions') {
        const read = (p: string | number[]) => (typeof p === 'string' ? p : String.fromCodePoint(...p));
        return send({ object: 'text_completion', choices: (body.prompt ?? []).map((p, index) => ({ index, text: `read ${read(p)}`, finish_reason: 'stop' })) });
      }
      if (req.url === '/v1/chat/completions') {
        return send({ object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `read ${render(body.messages ?? [])}` }, finish_reason: 'stop' }] });
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: { host: '127.0.0.1', port, tags: {} },
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined),
  };
}

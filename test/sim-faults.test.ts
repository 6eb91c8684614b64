import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { SimServer } from '../src/sim/index.ts';
import { FAST, withServer } from './helpers/sim-server.ts';
import { until } from './helpers/patience.ts';

async function complete(origin: string, body: object = { prompt: 'x' }, signal?: AbortSignal): Promise<number> {
  const res = await request(origin + '/v1/completions', { method: 'POST', body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  await res.body.dump();
  return res.statusCode;
}

async function waitFor(condition: () => boolean): Promise<void> {
  await until(condition, 'the condition', 3000, { intervalMs: 10 });
}

test('setFaults switches error answers and health on and off at runtime', async () => {
  await withServer({}, async (server, origin) => {
    assert.equal(await complete(origin), 200);
    server.setFaults({ faultRate: 1, faultStatus: 503, healthStatus: 503 });
    assert.equal(await complete(origin), 503);
    assert.equal((await request(origin + '/health')).statusCode, 503);
    // Undefined puts an option back to its default.
    server.setFaults({ faultRate: 0, healthStatus: undefined });
    assert.equal(await complete(origin), 200);
    assert.equal((await request(origin + '/health')).statusCode, 200);
  });
});

test('setFaults rejects nonsense and changes nothing', async () => {
  await withServer({}, async (server, origin) => {
    assert.throws(() => server.setFaults({ faultRate: 1, faultStatus: 200 }), RangeError);
    assert.throws(() => server.setFaults({ stallAfterChunks: -1 }), RangeError);
    assert.equal(await complete(origin), 200);
  });
});

test('slowFactor set at runtime slows the sequences that start afterwards', async () => {
  await withServer({ ttftMs: 20 }, async (server, origin) => {
    await complete(origin);
    const before = server.stats().busyMs;
    server.setFaults({ slowFactor: 5 });
    await complete(origin);
    const took = server.stats().busyMs - before;
    assert.ok(took >= 99 && took < 101, `${took} ms`);
  });
});

test('hang set at runtime holds streamed and non-streamed requests unanswered; close() drops them', async () => {
  const server = new SimServer(FAST);
  await server.start();
  const origin = `http://127.0.0.1:${server.port}`;
  assert.equal(await complete(origin, { prompt: 'x', stream: true }), 200);
  server.setFaults({ hang: true });
  await assert.rejects(complete(origin, { prompt: 'x', stream: true }, AbortSignal.timeout(150)), { name: 'TimeoutError' });
  const hung = [complete(origin), complete(origin, { prompt: 'y', stream: true })];
  for (const h of hung) h.catch(() => {});
  await waitFor(() => server.stats().generationRequests === 4);
  await server.close();
  for (const h of hung) await assert.rejects(h);
});

test('dead at runtime resets connections like a crashed vLLM whose port stays bound; dead: false serves again', async () => {
  await withServer({}, async (server, origin) => {
    server.setFaults({ dead: true });
    await assert.rejects(complete(origin), (err: { code?: string }) => /ECONNRESET|UND_ERR_SOCKET/.test(String(err.code)));
    server.setFaults({ dead: false });
    assert.equal(await complete(origin), 200);
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { resolveSimOptions, SimServer, type SimOptions } from '../src/sim/index.ts';

async function withServer<T>(options: Partial<SimOptions>, fn: (origin: string) => Promise<T>): Promise<T> {
  const server = new SimServer({ ttftMs: 0, tpotMs: 0, requestOverheadMs: 0, maxModelLen: 100, ...options });
  await server.start();
  try {
    return await fn(`http://127.0.0.1:${server.port}`);
  } finally {
    await server.close();
  }
}

async function call(origin: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string }> {
  const res = await request(origin + path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
}

const overflow = { prompt: 'a'.repeat(40 * 4), max_tokens: 70 }; // 40 prompt tokens + 70 > 100

test('each profile answers /version, errors, overflow wording and param, reasoning fields and the cache gauge of its release', async () => {
  const cases = [
    {
      version: '0.10.0', answers: '0.10.0', flat: true, param: null, reasoning: ['reasoning_content'], gauges: ['gpu', 'kv'],
      message: /^This model's maximum context length is 100 tokens\. However, you requested 110 tokens \(40 in the messages, 70 in the completion\)\./,
    },
    {
      version: '0.11.0', answers: '0.11.0', flat: false, param: null, reasoning: ['reasoning_content'], gauges: ['kv'],
      message: /^'max_tokens' or 'max_completion_tokens' is too large: 70\. This model's maximum context length is 100 tokens and your request has 40 input tokens \(70 > 100 - 40\)\.$/,
    },
    {
      version: '0.13', answers: '0.13.0', flat: false, param: 'input_tokens', reasoning: ['reasoning', 'reasoning_content'], gauges: ['kv'],
      // The prompt is cut to L - M + 1 = 31 tokens before it is counted, hence "at least".
      message: /^This model's maximum context length is 100 tokens\. However, you requested 70 output tokens and your prompt contains at least 31 input tokens, for a total of at least 101 tokens\./,
    },
    { version: '0.16', answers: '0.16.0', flat: false, param: 'input_tokens', reasoning: ['reasoning'], gauges: ['kv'], message: /at least 31 input tokens/ },
  ];
  for (const c of cases) {
    await withServer({ vllmVersion: c.version, reasoning: 'auto' }, async (origin) => {
      assert.deepEqual((await call(origin, '/version')).json, { version: c.answers });
      const { status, json } = await call(origin, '/v1/completions', overflow);
      assert.equal(status, 400);
      const error = c.flat ? json : json.error;
      if (c.flat) assert.equal(json.object, 'error');
      assert.equal(error.type, 'BadRequestError');
      assert.equal(error.param, c.param, c.version);
      assert.match(error.message, c.message);
      const chat = await call(origin, '/v1/chat/completions', { messages: [{ role: 'user', content: 'q' }], max_tokens: 40 });
      const message = chat.json.choices[0].message;
      assert.deepEqual(Object.keys(message).filter((k) => k.startsWith('reasoning')).sort(), c.reasoning, c.version);
      const metrics = (await call(origin, '/metrics')).text;
      const gauges = ['gpu', 'kv'].filter((g) => new RegExp(`^vllm:${g}_cache_usage_perc\\{`, 'm').test(metrics));
      assert.deepEqual(gauges, c.gauges, c.version);
    });
  }
});

test('the prompt-list cap only on releases that have it; --max-prompts and --error-format override a profile', async () => {
  const list = Array.from({ length: 1025 }, () => 'p');
  await withServer({ vllmVersion: '0.13' }, async (origin) => assert.equal((await call(origin, '/v1/completions', { prompt: list, max_tokens: 1 })).status, 200));
  await withServer({ vllmVersion: 'latest' }, async (origin) => {
    const { status, json } = await call(origin, '/v1/completions', { prompt: list, max_tokens: 1 });
    assert.equal(status, 400);
    assert.match(json.error.message, /exceeds the maximum allowed count of 1024/);
  });
  await withServer({ vllmVersion: '0.10.0', maxPrompts: 2, errorFormat: 'nested' }, async (origin) => {
    const { status, json } = await call(origin, '/v1/completions', { prompt: ['a', 'b', 'c'] });
    assert.equal(status, 400);
    assert.match(json.error.message, /maximum allowed count of 2/);
  });
});

test('without a profile the historical behaviour stays; nonsense versions are refused', () => {
  const o = resolveSimOptions({});
  assert.deepEqual([o.errorFormat, o.contextError, o.cacheMetric, o.maxPrompts], ['nested', 'requested', 'kv', 1024]);
  assert.equal(resolveSimOptions({ reasoning: 'auto' }).reasoning, 'reasoning');
  assert.throws(() => resolveSimOptions({ vllmVersion: 'v1' }), RangeError);
});

import assert from 'node:assert/strict';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { request } from 'undici';
import { SimServer, startSimCluster } from '../src/sim/index.ts';
import { FAST, withServer } from './helpers/sim-server.ts';
import { until } from './helpers/patience.ts';
import { DONE, sseEvents } from './helpers/sse.ts';

// The simulated chat template around one user message: <|im_start|> user \n … <|im_end|> \n <|im_start|> assi stan t \n.
const CHAT_TEMPLATE_TOKENS = 10;

interface Reply {
  status: number;
  json: any;
}

async function post(origin: string, path: string, body: unknown, signal?: AbortSignal): Promise<Reply> {
  const res = await request(origin + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  return { status: res.statusCode, json: await res.body.json() };
}

async function get(origin: string, path: string): Promise<{ status: number; text: string }> {
  const res = await request(origin + path);
  return { status: res.statusCode, text: await res.body.text() };
}

/** The value of the sample of `name` whose labels include all of `labels`. */
function metric(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 3000): Promise<T> {
  return until(probe, 'the condition', timeoutMs, { ready: (v) => v !== undefined, intervalMs: 10 }) as Promise<T>;
}

async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
  throw new Error('expected the request to fail');
}

test('GET /health answers 200 with an empty body, or the configured status after faultAfter', async () => {
  await withServer({}, async (_server, origin) => {
    assert.deepEqual(await get(origin, '/health'), { status: 200, text: '' });
  });
  await withServer({ healthStatus: 503, faultAfter: 1 }, async (_server, origin) => {
    assert.equal((await get(origin, '/health')).status, 200);
    await post(origin, '/v1/completions', { prompt: 'x' });
    assert.deepEqual(await get(origin, '/health'), { status: 503, text: '' });
  });
});

test('GET /v1/models lists the served model with max_model_len', async () => {
  await withServer({ model: 'm-1', maxModelLen: 4096 }, async (_server, origin) => {
    const res = await get(origin, '/v1/models');
    const body = JSON.parse(res.text);
    assert.equal(body.object, 'list');
    assert.equal(body.data.length, 1);
    const card = body.data[0];
    assert.deepEqual(
      { id: card.id, object: card.object, owned_by: card.owned_by, root: card.root, parent: card.parent, max_model_len: card.max_model_len },
      { id: 'm-1', object: 'model', owned_by: 'vllm', root: 'm-1', parent: null, max_model_len: 4096 },
    );
    assert.equal(typeof card.created, 'number');
    assert.equal(card.permission[0].object, 'model_permission');
  });
});

test('a prompt list with n=2 answers choices indexed prompt*n+j in order, with summed usage', async () => {
  await withServer({}, async (server, origin) => {
    const prompts = ['alpha one', 'beta', 'gamma gamma gamma gamma gamma']; // 3, 1, 10 prompt tokens: letters go 4 to a token
    const { status, json } = await post(origin, '/v1/completions', { model: 'sim-model', prompt: prompts, n: 2, max_tokens: 3, temperature: 0.7, seed: 3, stop: ['\n'], whatever: true });
    assert.equal(status, 200);
    assert.match(json.id, /^cmpl-/);
    assert.equal(json.object, 'text_completion');
    assert.equal(json.model, 'sim-model');
    assert.deepEqual(json.choices.map((c: any) => c.index), [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(
      json.choices.map((c: any) => [c.text, c.finish_reason]),
      [
        ['completion: alpha one', 'stop'],
        ['completion: alpha one', 'stop'],
        ['completion: beta', 'stop'],
        ['completion: beta', 'stop'],
        ['completion: gamma gamma', 'length'],
        ['completion: gamma gamma', 'length'],
      ],
    );
    assert.ok(json.choices.every((c: any) => c.logprobs === null && c.stop_reason === null));
    assert.deepEqual(json.usage, { prompt_tokens: 3 + 1 + 10, completion_tokens: 3 + 3 + 2 + 2 + 3 + 3, total_tokens: 14 + 16 });
    assert.equal(server.stats().promptsReceived, 3);
    assert.equal(server.stats().generationRequests, 1);
  });
});

test('echo=true puts the prompt in front of the completion; max_tokens null means 16', async () => {
  await withServer({}, async (_server, origin) => {
    const { json } = await post(origin, '/v1/completions', { prompt: 'Q: ', echo: true, max_tokens: null });
    assert.equal(json.choices[0].text, 'Q: completion: Q:');
    const long = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
    const { json: truncated } = await post(origin, '/v1/completions', { prompt: long, max_tokens: null });
    assert.equal(truncated.usage.completion_tokens, 16);
    assert.equal(truncated.choices[0].finish_reason, 'length');
  });
});

test('shuffleChoices returns the array out of order but every index still names its prompt', async () => {
  await withServer({ shuffleChoices: true }, async (_server, origin) => {
    const prompts = ['p0', 'p1', 'p2', 'p3'];
    const { json } = await post(origin, '/v1/completions', { prompt: prompts, n: 2 });
    const indices = json.choices.map((c: any) => c.index);
    assert.notDeepEqual(indices, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual([...indices].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7]);
    for (const c of json.choices) assert.equal(c.text, `completion: ${prompts[Math.floor(c.index / 2)]}`);
  });
});

test('one over-long prompt fails the whole list with 400 "maximum context length"', async () => {
  await withServer({ maxModelLen: 100 }, async (server, origin) => {
    const { status, json } = await post(origin, '/v1/completions', { prompt: ['short', '9'.repeat(100), 'short'], max_tokens: 10 });
    assert.equal(status, 400);
    assert.equal(json.error.type, 'BadRequestError');
    assert.equal(json.error.code, 400);
    assert.match(json.error.message, /maximum context length is 100 tokens/);
    assert.match(json.error.message, /you requested 110 tokens \(100 in the messages, 10 in the completion\)/);
    assert.equal(server.stats().busyMs, 0);
  });
});

test('a list longer than maxPrompts is rejected with vLLM\'s VLLM_MAX_COMPLETION_PROMPTS message', async () => {
  await withServer({ maxPrompts: 3 }, async (_server, origin) => {
    assert.equal((await post(origin, '/v1/completions', { prompt: ['a', 'b', 'c'] })).status, 200);
    const { status, json } = await post(origin, '/v1/completions', { prompt: ['a', 'b', 'c', 'd'] });
    assert.equal(status, 400);
    assert.equal(
      json.error.message,
      'prompt list length 4 exceeds the maximum allowed count of 3. To increase this limit, set the VLLM_MAX_COMPLETION_PROMPTS environment variable.',
    );
  });
});

test('request validation: token-id prompts, bad JSON, unknown paths and wrong methods', async () => {
  await withServer({}, async (_server, origin) => {
    assert.equal((await post(origin, '/v1/completions', { prompt: [1, 2, 15] })).status, 400);
    assert.equal((await post(origin, '/v1/completions', { prompt: 'x', n: 0 })).status, 400);
    assert.equal((await post(origin, '/v1/completions', { prompt: 'x', stream_options: { include_usage: true } })).status, 400);
    const bad = await post(origin, '/v1/completions', '{"prompt": ');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.type, 'BadRequestError');
    assert.deepEqual(await get(origin, '/v2/nothing'), { status: 404, text: '{"detail":"Not Found"}' });
    assert.equal((await get(origin, '/v1/completions')).status, 405);
  });
});

test('an unknown model is a 404 NotFoundError, nested by default and flat for old vLLM', async () => {
  await withServer({}, async (_server, origin) => {
    const { status, json } = await post(origin, '/v1/completions', { model: 'gpt-x', prompt: 'hi' });
    assert.equal(status, 404);
    assert.deepEqual(json, { error: { message: 'The model `gpt-x` does not exist.', type: 'NotFoundError', param: null, code: 404 } });
    assert.equal((await post(origin, '/v1/completions', { model: '', prompt: 'hi' })).status, 200);
  });
  await withServer({ errorFormat: 'flat' }, async (_server, origin) => {
    const { json } = await post(origin, '/v1/chat/completions', { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] });
    assert.deepEqual(json, { object: 'error', message: 'The model `gpt-x` does not exist.', type: 'NotFoundError', param: null, code: 404 });
  });
});

test('faultRate=1 with faultAfter=2: two requests succeed, the third gets faultStatus', async () => {
  await withServer({ faultRate: 1, faultAfter: 2, faultStatus: 503 }, async (_server, origin) => {
    const body = { messages: [{ role: 'user', content: 'hi' }] };
    assert.equal((await post(origin, '/v1/chat/completions', body)).status, 200);
    assert.equal((await post(origin, '/v1/completions', { prompt: 'hi' })).status, 200);
    const third = await post(origin, '/v1/chat/completions', body);
    assert.equal(third.status, 503);
    assert.equal(third.json.error.type, 'ServiceUnavailableError');
    assert.equal((await get(origin, '/health')).status, 200);
  });
});

test('dieAfter: later generation requests and new connections are reset, not refused', async () => {
  await withServer({ dieAfter: 1 }, async (server, origin) => {
    assert.equal((await post(origin, '/v1/completions', { prompt: 'a' })).status, 200);
    assert.match(await errorCode(post(origin, '/v1/completions', { prompt: 'b' })), /^(ECONNRESET|UND_ERR_SOCKET)$/);
    assert.match(await errorCode(get(origin, '/health')), /^(ECONNRESET|UND_ERR_SOCKET)$/);
    assert.equal(server.stats().generationRequests, 2);
  });
});

test('bootMs: connection refused while booting, then healthy on the same port', async () => {
  await withServer({ bootMs: 300 }, async (server, origin) => {
    assert.ok(server.port > 0);
    assert.equal(await errorCode(get(origin, '/health')), 'ECONNREFUSED');
    const status = await waitFor(async () => (await get(origin, '/health').catch(() => undefined))?.status);
    assert.equal(status, 200);
  });
});

test('hang: requests are accepted but never answered; close() still resolves', async () => {
  const server = new SimServer({ ...FAST, hang: true, faultAfter: 1 });
  await server.start();
  const origin = `http://127.0.0.1:${server.port}`;
  assert.equal((await post(origin, '/v1/completions', { prompt: 'a' })).status, 200);
  await assert.rejects(post(origin, '/v1/completions', { prompt: 'b' }, AbortSignal.timeout(150)), { name: 'TimeoutError' });
  const pending = post(origin, '/v1/completions', { prompt: 'c' });
  pending.catch(() => {});
  await waitFor(async () => (server.stats().generationRequests === 3 ? true : undefined));
  await server.close();
  await assert.rejects(pending);
});

test('reasoning models think 32 tokens first: small budgets give content null and finish length', async () => {
  const chat = { messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'why' }] };
  await withServer({ reasoning: 'reasoning' }, async (_server, origin) => {
    const small = await post(origin, '/v1/chat/completions', { ...chat, max_tokens: 10 });
    const message = small.json.choices[0].message;
    assert.equal(message.content, null);
    assert.equal(message.reasoning.split(' ').length, 10);
    assert.ok(!('reasoning_content' in message));
    assert.equal(small.json.choices[0].finish_reason, 'length');
    assert.equal(small.json.usage.completion_tokens, 10);

    const big = await post(origin, '/v1/chat/completions', { ...chat, max_completion_tokens: 100 });
    assert.equal(big.json.choices[0].message.content, 'completion: why');
    assert.equal(big.json.choices[0].message.reasoning.split(' ').length, 32);
    assert.equal(big.json.choices[0].finish_reason, 'stop');
    assert.equal(big.json.usage.completion_tokens, 34);

    const cut = await post(origin, '/v1/chat/completions', { ...chat, max_tokens: 33 });
    assert.equal(cut.json.choices[0].message.content, 'completion:');
    assert.equal(cut.json.choices[0].finish_reason, 'length');
  });
  await withServer({ reasoning: 'reasoning_content' }, async (_server, origin) => {
    const { json } = await post(origin, '/v1/chat/completions', { ...chat, max_tokens: 5 });
    const message = json.choices[0].message;
    assert.equal(message.reasoning_content.split(' ').length, 5);
    assert.ok(!('reasoning' in message));
  });
  // vLLM 0.11–0.15 send both fields, streamed deltas included.
  await withServer({ reasoning: 'both' }, async (_server, origin) => {
    const { json } = await post(origin, '/v1/chat/completions', { ...chat, max_tokens: 5 });
    const message = json.choices[0].message;
    assert.equal(message.reasoning.split(' ').length, 5);
    assert.equal(message.reasoning_content, message.reasoning);
    const res = await request(origin + '/v1/chat/completions', { method: 'POST', body: JSON.stringify({ ...chat, max_tokens: 5, stream: true }) });
    const deltas = (await sseEvents(res.body)).slice(1, -1).map((e) => e.choices[0].delta);
    assert.deepEqual(deltas[0], { reasoning: 'Let', reasoning_content: 'Let' });
  });
  await withServer({}, async (_server, origin) => {
    const { json } = await post(origin, '/v1/chat/completions', chat);
    assert.deepEqual(json.choices[0].message, { role: 'assistant', content: 'completion: why', tool_calls: [] });
    assert.match(json.id, /^chatcmpl-/);
    assert.equal(json.object, 'chat.completion');
  });
});

test('chat without a budget uses the rest of the context window; a prompt that fills it is rejected', async () => {
  await withServer({ maxModelLen: 50, reply: 'lorem' }, async (_server, origin) => {
    const { json } = await post(origin, '/v1/chat/completions', { messages: [{ role: 'user', content: 'x'.repeat(40) }] });
    assert.equal(json.usage.prompt_tokens, 10 + CHAT_TEMPLATE_TOKENS);
    assert.ok(json.usage.completion_tokens >= 15 && json.usage.completion_tokens <= 30, String(json.usage.completion_tokens));
    // 40 digits are 40 tokens (a chars/4 estimate says 10): with the template, exactly the window.
    const full = await post(origin, '/v1/chat/completions', { messages: [{ role: 'user', content: '1'.repeat(40) }] });
    assert.equal(full.status, 400);
    assert.match(full.json.error.message, /maximum context length is 50 tokens\. However, you requested 50 tokens in the messages/);
  });
});

test('lorem replies are deterministic per seed, prompt and choice, and stop at a sampled end-of-sequence within max_tokens', async () => {
  const run = (seed: number): Promise<string[]> =>
    withServer({ reply: 'lorem', seed, answerTokens: 12 }, async (_server, origin) => {
      const { json } = await post(origin, '/v1/completions', { prompt: ['a', 'b'], n: 2, max_tokens: 20 });
      for (const c of json.choices) {
        const words = c.text.split(' ').length;
        assert.ok(words >= 1 && words <= 20, `${words} words`);
        assert.equal(c.finish_reason, words === 20 ? 'length' : 'stop');
      }
      return json.choices.map((c: any) => c.text as string);
    });
  const [first, again, other] = [await run(1), await run(1), await run(2)];
  assert.deepEqual(first, again);
  assert.notDeepEqual(first, other);
  assert.notEqual(first[0], first[1]);
});

test('/metrics counts HTTP requests the instrumentator way and reports token counters', async () => {
  await withServer({}, async (_server, origin) => {
    for (let i = 0; i < 3; i++) await post(origin, '/v1/completions', { prompt: ['a', 'b'] });
    await post(origin, '/v1/completions', { prompt: 'a', model: 'nope' });
    await post(origin, '/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] });
    await get(origin, '/health');
    const { status, text } = await get(origin, '/metrics');
    assert.equal(status, 200);
    assert.match(text, /^# HELP vllm:num_requests_running /m);
    assert.match(text, /^# TYPE http_requests_total counter$/m);
    assert.equal(metric(text, 'http_requests_total', { handler: '/v1/completions', method: 'POST', status: '2xx' }), 3);
    assert.equal(metric(text, 'http_requests_total', { handler: '/v1/completions', method: 'POST', status: '4xx' }), 1);
    assert.equal(metric(text, 'http_requests_total', { handler: '/v1/chat/completions', method: 'POST', status: '2xx' }), 1);
    assert.equal(metric(text, 'http_requests_total', { handler: '/health' }), undefined);
    assert.equal(metric(text, 'vllm:prompt_tokens_total'), 6 + 1 + CHAT_TEMPLATE_TOKENS);
    assert.equal(metric(text, 'vllm:generation_tokens_total'), 14);
    assert.equal(metric(text, 'vllm:request_success_total', { finished_reason: 'stop' }), 7);
    assert.equal(metric(text, 'vllm:num_requests_running', { model_name: 'sim-model' }), 0);
  });
});

test('running/waiting gauges follow maxNumSeqs, and a client that disconnects frees its slots', async () => {
  await withServer({ maxNumSeqs: 1, ttftMs: 10_000 }, async (server, origin) => {
    const controller = new AbortController();
    const slow = post(origin, '/v1/completions', { prompt: ['a', 'b', 'c'] }, controller.signal);
    slow.catch(() => {});
    const scrape = async (): Promise<string> => (await get(origin, '/metrics')).text;
    const busy = await waitFor(async () => {
      const text = await scrape();
      return metric(text, 'vllm:num_requests_running') === 1 ? text : undefined;
    });
    assert.equal(metric(busy, 'vllm:num_requests_waiting'), 2);
    assert.equal(metric(busy, 'vllm:kv_cache_usage_perc'), 1);
    controller.abort();
    const idle = await waitFor(async () => {
      const text = await scrape();
      return metric(text, 'vllm:num_requests_running') === 0 ? text : undefined;
    });
    assert.equal(metric(idle, 'vllm:num_requests_waiting'), 0);
    // The cancelled sequence counts only for the time it ran, not its modeled 10 s.
    assert.ok(server.stats().busyMs < 5000, String(server.stats().busyMs));
  });
});

test('a client that drops a stream midway frees the rest of its sequences', async () => {
  await withServer({ maxNumSeqs: 1, ttftMs: 30 }, async (_server, origin) => {
    const controller = new AbortController();
    const res = await request(origin + '/v1/completions', {
      method: 'POST',
      body: JSON.stringify({ prompt: ['a', 'b', 'c', 'd', 'e'], stream: true }),
      signal: controller.signal,
    });
    for await (const chunk of res.body) {
      if (String(chunk).includes('finish_reason":"stop"')) break;
    }
    controller.abort();
    await waitFor(async () => (metric((await get(origin, '/metrics')).text, 'vllm:num_requests_waiting') === 0 ? true : undefined));
    assert.equal((await post(origin, '/v1/completions', { prompt: 'next' })).json.choices[0].text, 'completion: next');
  });
});

test('latency model: 4 sequences on 2 slots run in two waves', async () => {
  const prompts = ['p0', 'p1', 'p2', 'p3'];
  await withServer({ maxNumSeqs: 2, ttftMs: 50 }, async (server, origin) => {
    const started = performance.now();
    assert.equal((await post(origin, '/v1/completions', { prompt: prompts })).status, 200);
    assert.ok(performance.now() - started >= 95);
    assert.ok(server.stats().busyMs >= 99 && server.stats().busyMs < 101, String(server.stats().busyMs));

    // Streaming shows the waves: prompts 0 and 1 finish before 2 and 3.
    const res = await request(origin + '/v1/completions', { method: 'POST', body: JSON.stringify({ prompt: prompts, stream: true }) });
    const finished = (await sseEvents(res.body))
      .filter((e) => e !== DONE && e.choices[0].finish_reason)
      .map((e) => e.choices[0].index);
    assert.deepEqual(finished.slice(0, 2).sort(), [0, 1]);
    assert.deepEqual(finished.slice(2).sort(), [2, 3]);
  });
  await withServer({ maxNumSeqs: 4, ttftMs: 50 }, async (server, origin) => {
    await post(origin, '/v1/completions', { prompt: prompts });
    assert.ok(server.stats().busyMs >= 49 && server.stats().busyMs < 51, String(server.stats().busyMs));
  });
});

test('latency model: request overhead is serialized per server', async () => {
  await withServer({ requestOverheadMs: 40 }, async (_server, origin) => {
    const started = performance.now();
    const done: number[] = [];
    await Promise.all(
      [0, 1, 2].map(async (i) => {
        await post(origin, '/v1/completions', { prompt: `p${i}` });
        done.push(performance.now() - started);
      }),
    );
    assert.ok(Math.max(...done) >= 115, `last request finished after ${Math.max(...done)} ms`);
  });
});

test('streaming completions with include_usage: interleaved chunks, a usage chunk, then [DONE]', async () => {
  await withServer({}, async (_server, origin) => {
    const res = await request(origin + '/v1/completions', {
      method: 'POST',
      body: JSON.stringify({ prompt: ['a b', 'c'], n: 2, stream: true, stream_options: { include_usage: true } }),
    });
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    const events = (await sseEvents(res.body));
    assert.equal(events.at(-1), DONE);
    const usage = events.at(-2);
    assert.deepEqual(usage.choices, []);
    assert.deepEqual(usage.usage, { prompt_tokens: 3, completion_tokens: 10, total_tokens: 13 });
    const texts = new Map<number, string>();
    for (const e of events.slice(0, -2)) {
      assert.equal(e.object, 'text_completion');
      const [c] = e.choices;
      texts.set(c.index, (texts.get(c.index) ?? '') + c.text);
    }
    assert.deepEqual([...texts].sort(([a], [b]) => a - b), [
      [0, 'completion: a b'],
      [1, 'completion: a b'],
      [2, 'completion: c'],
      [3, 'completion: c'],
    ]);
  });
});

test('keep-alive: sequential requests reuse one connection', async () => {
  await withServer({}, async (_server, origin) => {
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
    const reused: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest(`${origin}/v1/completions`, { method: 'POST', agent }, (res) => {
          reused.push(req.reusedSocket);
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end(JSON.stringify({ prompt: `p${i}` }));
      });
    }
    agent.destroy();
    assert.deepEqual(reused, [false, true, true]);
  });
});

test('large lists queue through the slots in order, with and without latency', async () => {
  const prompts = Array.from({ length: 2500 }, (_, i) => `p${i}`);
  for (const ttftMs of [0, 1]) {
    await withServer({ maxNumSeqs: 64, maxPrompts: 5000, ttftMs }, async (_server, origin) => {
      const { json } = await post(origin, '/v1/completions', { prompt: prompts });
      assert.deepEqual(json.choices.map((c: any) => c.text), prompts.map((p) => `completion: ${p}`));
      const metrics = (await get(origin, '/metrics')).text;
      assert.equal(metric(metrics, 'vllm:num_requests_waiting'), 0);
      assert.equal(metric(metrics, 'vllm:request_success_total', { finished_reason: 'stop' }), 2500);
    });
  }
});

test('zero latency settings serve many concurrent requests', async () => {
  await withServer({ maxNumSeqs: 8 }, async (server, origin) => {
    await Promise.all(Array.from({ length: 200 }, (_, i) => post(origin, '/v1/chat/completions', { messages: [{ role: 'user', content: `q${i}` }] })));
    assert.equal(server.stats().httpRequests['POST /v1/chat/completions 200'], 200);
  });
});

test('startSimCluster starts servers on distinct loopback ports and closes them all', async () => {
  const cluster = await startSimCluster(3, FAST);
  try {
    assert.equal(new Set(cluster.endpoints.map((e) => e.port)).size, 3);
    for (const [i, ep] of cluster.endpoints.entries()) {
      assert.deepEqual(ep, { host: '127.0.0.1', port: cluster.servers[i]!.port, tags: {} });
      assert.equal((await get(`http://127.0.0.1:${ep.port}`, '/health')).status, 200);
    }
  } finally {
    await cluster.close();
  }
  // A fresh connection: the client's pooled one was dropped and would fail differently.
  const probe = new Promise((resolve, reject) => connect(cluster.endpoints[0]!.port, '127.0.0.1', () => resolve(undefined)).on('error', reject));
  assert.equal(await errorCode(probe), 'ECONNREFUSED');
});

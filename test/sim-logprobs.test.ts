import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { SimServer } from '../src/sim/index.ts';
import { DONE, sseEvents } from './helpers/sse.ts';

let server: SimServer;

before(async () => {
  server = new SimServer({ ttftMs: 0, tpotMs: 0, requestOverheadMs: 0 });
  await server.start();
});

after(() => server.close());

async function post(path: string, body: object): Promise<{ status: number; text: string }> {
  const res = await request(`http://127.0.0.1:${server.port}${path}`, { method: 'POST', body: JSON.stringify(body) });
  return { status: res.statusCode, text: await res.body.text() };
}

const json = async (path: string, body: object): Promise<any> => JSON.parse((await post(path, body)).text);
const chunks = async (path: string, body: object): Promise<any[]> => (await sseEvents((await post(path, { ...body, stream: true })).text)).filter((e) => e !== DONE);

test('completions logprobs: a CompletionLogProbs object per choice, the sampled token the likeliest; streamed the same token by token', async () => {
  const body = { prompt: 'two words', logprobs: 3, max_tokens: 8 };
  const { choices } = await json('/v1/completions', body);
  const lp = choices[0].logprobs;
  assert.deepEqual(Object.keys(lp), ['text_offset', 'token_logprobs', 'tokens', 'top_logprobs']);
  assert.deepEqual(lp.tokens, ['completion:', ' two', ' words']);
  assert.deepEqual(lp.text_offset, [0, 11, 15]);
  lp.top_logprobs.forEach((top: Record<string, number>, i: number) => {
    assert.equal(Object.keys(top).length, 3);
    assert.equal(top[lp.tokens[i]], lp.token_logprobs[i]);
    assert.ok(Object.values(top).every((v) => v <= lp.token_logprobs[i] && v <= 0));
  });
  const streamed = (await chunks('/v1/completions', body)).map((c) => c.choices[0].logprobs);
  assert.deepEqual(streamed.flatMap((s) => s.token_logprobs), lp.token_logprobs);
  assert.deepEqual(streamed.flatMap((s) => s.text_offset), lp.text_offset);
  assert.equal((await json('/v1/completions', { prompt: 'x' })).choices[0].logprobs, null);
});

test('chat logprobs: content entries with bytes and top_logprobs; top_logprobs without logprobs is a 400', async () => {
  const body = { messages: [{ role: 'user', content: 'hé' }], logprobs: true, top_logprobs: 2 };
  const { choices } = await json('/v1/chat/completions', body);
  const content = choices[0].logprobs.content;
  assert.deepEqual(content.map((c: any) => c.token), ['completion:', ' hé']);
  assert.deepEqual(content[1].bytes, [...Buffer.from(' hé')]);
  assert.ok(content.every((c: any) => c.top_logprobs.length === 2 && c.top_logprobs[0].token === c.token));
  const streamed = (await chunks('/v1/chat/completions', body)).filter((c) => c.choices[0]?.logprobs);
  assert.deepEqual(streamed.flatMap((c) => c.choices[0].logprobs.content), content);
  const bad = await post('/v1/chat/completions', { messages: body.messages, top_logprobs: 2 });
  assert.equal(bad.status, 400);
  assert.equal((await post('/v1/completions', { prompt: 'x', logprobs: 21 })).status, 400);
});

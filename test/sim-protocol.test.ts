/** Smaller parts of vLLM's HTTP surface: return_token_ids, /ping, /load. Real HTTP over loopback. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { until } from './helpers/patience.ts';
import { withServer } from './helpers/sim-server.ts';
import { DONE, sseEvents } from './helpers/sse.ts';

async function post(origin: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await request(origin + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.statusCode, json: await res.body.json() };
}

async function get(origin: string, path: string, method: 'GET' | 'POST' = 'GET'): Promise<{ status: number; text: string }> {
  const res = await request(origin + path, { method });
  return { status: res.statusCode, text: await res.body.text() };
}

test('return_token_ids: completions give prompt_token_ids and token_ids per choice, as /tokenize and /detokenize read them', async () => {
  await withServer({ reply: 'echo' }, async (_server, origin) => {
    const ids = (await post(origin, '/tokenize', { prompt: 'Say hi.' })).json.tokens as number[];
    for (const prompt of [['Say hi.', 'Say hi.'], [ids, ids]]) {
      const { json } = await post(origin, '/v1/completions', { prompt, max_tokens: 8, return_token_ids: true });
      assert.equal(json.choices.length, 2);
      const [choice] = json.choices;
      assert.deepEqual(choice.prompt_token_ids, ids);
      assert.equal((await post(origin, '/detokenize', { tokens: choice.token_ids })).json.prompt, choice.text);
    }
    const plain = await post(origin, '/v1/completions', { prompt: 'Say hi.', max_tokens: 8 });
    assert.equal('token_ids' in plain.json.choices[0], false, 'only when asked');
  });
});

test('return_token_ids: chat gives the prompt ids on the response and token_ids per choice', async () => {
  await withServer({ reply: 'echo' }, async (_server, origin) => {
    const messages = [{ role: 'user', content: 'Say hi.' }];
    const rendered = (await post(origin, '/tokenize', { messages, add_generation_prompt: true })).json.tokens;
    const { json } = await post(origin, '/v1/chat/completions', { messages, max_tokens: 8, return_token_ids: true });
    assert.deepEqual(json.prompt_token_ids, rendered);
    assert.equal((await post(origin, '/detokenize', { tokens: json.choices[0].token_ids })).json.prompt, json.choices[0].message.content);
  });
});

test('return_token_ids streamed: the first chunk of a choice has the prompt ids, every chunk its token ids', async () => {
  await withServer({ reply: 'echo' }, async (_server, origin) => {
    const res = await request(`${origin}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'Say hi.', max_tokens: 8, stream: true, return_token_ids: true }),
    });
    const chunks = (await sseEvents(res.body)).filter((e) => e !== DONE);
    const choices = chunks.flatMap((c) => c.choices);
    assert.ok(Array.isArray(choices[0].prompt_token_ids));
    assert.ok(choices.slice(1).every((c: any) => !('prompt_token_ids' in c)));
    const all = choices.flatMap((c: any) => c.token_ids);
    assert.equal((await post(origin, '/detokenize', { tokens: all })).json.prompt, choices.map((c: any) => c.text).join(''));
  });
});

test('/ping answers as /health does, for GET and POST', async () => {
  await withServer({}, async (_server, origin) => {
    assert.deepEqual(await get(origin, '/ping'), { status: 200, text: '' });
    assert.deepEqual(await get(origin, '/ping', 'POST'), { status: 200, text: '' });
  });
  await withServer({ healthStatus: 503, faultAfter: 0 }, async (_server, origin) => {
    assert.equal((await get(origin, '/ping')).status, (await get(origin, '/health')).status);
  });
});

test('/load counts the generation requests being answered', async () => {
  await withServer({ ttftMs: 0, tpotMs: 20 }, async (_server, origin) => {
    assert.deepEqual(JSON.parse((await get(origin, '/load')).text), { server_load: 0 });
    const running = Promise.all([1, 2].map(() => post(origin, '/v1/completions', { prompt: 'x', max_tokens: 20, ignore_eos: true })));
    const load = async () => JSON.parse((await get(origin, '/load')).text).server_load as number;
    await until(load, 'both requests counted by /load', 15_000, { ready: (n) => n === 2, intervalMs: 5 });
    await running;
    assert.equal(await until(load, '/load back to 0 once both are answered', 15_000, { ready: (n) => n === 0, intervalMs: 5 }), 0);
  });
});

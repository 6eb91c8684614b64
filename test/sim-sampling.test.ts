import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { startSimCluster, type SimCluster } from '../src/sim/index.ts';

let cluster: SimCluster;

before(async () => {
  cluster = await startSimCluster(2, { ttftMs: 0, tpotMs: 0, requestOverheadMs: 0, reply: 'lorem', answerTokens: 20 });
});

after(() => cluster.close());

async function texts(endpoint: number, body: object): Promise<Array<{ text: string; finish_reason: string; tokens: number }>> {
  const { port } = cluster.endpoints[endpoint]!;
  const res = await request(`http://127.0.0.1:${port}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'q', ...body }) });
  const json: any = await res.body.json();
  assert.equal(res.statusCode, 200, JSON.stringify(json));
  return json.choices.map((c: any) => ({ text: c.text, finish_reason: c.finish_reason, tokens: c.text.split(' ').length }));
}

test('temperature 0 is greedy: every choice on every endpoint answers the same', async () => {
  const [a, b] = [await texts(0, { temperature: 0, n: 3, max_tokens: 200 }), await texts(1, { temperature: 0, n: 3, max_tokens: 200 })];
  assert.equal(new Set([...a, ...b].map((c) => c.text)).size, 1);
});

test('a request seed repeats on every endpoint and differs per seed; sampling without one differs per endpoint', async () => {
  const seeded = (endpoint: number, seed: number) => texts(endpoint, { temperature: 0.8, seed, max_tokens: 200 });
  assert.deepEqual(await seeded(0, 7), await seeded(1, 7));
  assert.notDeepEqual(await seeded(0, 7), await seeded(0, 8));
  const sampled = (endpoint: number) => texts(endpoint, { temperature: 0.8, max_tokens: 200 });
  assert.notDeepEqual(await sampled(0), await sampled(1));
  // What a majority vote over endpoints sees: sampled answers disagree.
  const votes = await Promise.all([0, 1, 0, 1].map(async (e) => (await sampled(e))[0]!.text));
  assert.ok(new Set(votes).size > 1);
});

test('with answerTokens, lorem stops at a sampled end-of-sequence whatever the budget; ignore_eos still fills it', async () => {
  const choices = await texts(0, { n: 64, max_tokens: 1000, temperature: 1, seed: 1 });
  const lengths = choices.map((c) => c.tokens).sort((x, y) => x - y);
  assert.ok(choices.every((c) => c.finish_reason === 'stop'));
  const median = lengths[32]!;
  assert.ok(median >= 10 && median <= 40, `median ${median} of ${lengths.join(',')}`);
  assert.ok(new Set(lengths).size > 5, 'lengths vary');
  const short = await texts(0, { n: 16, max_tokens: 5, temperature: 1, seed: 1 });
  assert.ok(short.every((c) => c.tokens <= 5 && c.finish_reason === (c.tokens === 5 ? 'length' : 'stop')));
  const filled = await texts(0, { max_tokens: 300, ignore_eos: true });
  assert.deepEqual([filled[0]!.tokens, filled[0]!.finish_reason], [300, 'length']);
});

test('a negative temperature is a 400, as vLLM', async () => {
  const res = await request(`http://127.0.0.1:${cluster.endpoints[0]!.port}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: 'q', temperature: -1 }) });
  assert.equal(res.statusCode, 400);
  assert.equal(((await res.body.json()) as any).error.param, 'temperature');
});

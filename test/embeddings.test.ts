import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { embedAll, endpointId, scatterGather, subpool, type Endpoint } from '../src/core/index.ts';
import { Fixture } from './helpers/swarm.ts';

const fx = new Fixture();
afterEach(() => fx.close());

const post = async (ep: Endpoint, path: string, body: unknown) => {
  const res = await fetch(`http://${endpointId(ep)}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const norm = (v: number[]) => Math.hypot(...v);
const embedCalls = (sim: { servers: Array<{ stats(): { httpRequests: Record<string, number> } }> }) => sim.servers.map((s) => s.stats().httpRequests['POST /v1/embeddings 200'] ?? 0);

describe('simulator as a pooling model (--task embed)', () => {
  it('answers /v1/embeddings with deterministic unit vectors in input order, as floats or base64', async () => {
    const sim = await fx.sim(2, { task: 'embed', model: 'emb', embeddingDim: 8 });
    const [a, b] = sim.endpoints as [Endpoint, Endpoint];
    const list = await post(a, '/v1/embeddings', { model: 'emb', input: ['x', 'y', 'x'] });
    assert.equal(list.status, 200);
    assert.equal(list.body.object, 'list');
    assert.deepEqual(list.body.data.map((d: any) => [d.index, d.object, d.embedding.length]), [[0, 'embedding', 8], [1, 'embedding', 8], [2, 'embedding', 8]]);
    for (const d of list.body.data) assert.ok(Math.abs(norm(d.embedding) - 1) < 1e-9);
    assert.deepEqual(list.body.data[0].embedding, list.body.data[2].embedding);
    assert.notDeepEqual(list.body.data[0].embedding, list.body.data[1].embedding);
    assert.equal(list.body.usage.prompt_tokens, 3);
    const single = await post(b, '/v1/embeddings', { input: 'x', encoding_format: 'base64' });
    const decoded = [...new Float32Array(Uint8Array.from(Buffer.from(single.body.data[0].embedding, 'base64')).buffer)];
    assert.equal(decoded.length, 8);
    decoded.forEach((x, i) => assert.ok(Math.abs(x - list.body.data[0].embedding[i]) < 1e-6, 'another server, same vector'));
    assert.equal((await post(a, '/v1/embeddings', { model: 'other', input: 'x' })).status, 404);
    assert.equal((await post(a, '/v1/embeddings', { input: [] })).status, 400);
  });

  it("each kind refuses the other's API with vLLM's 400", async () => {
    const gen = await fx.sim(1);
    const emb = await fx.sim(1, { task: 'embed' });
    const refused = await post(gen.endpoints[0]!, '/v1/embeddings', { input: 'x' });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.message, 'The model does not support Embeddings API');
    const chat = await post(emb.endpoints[0]!, '/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(chat.body.error.message, 'The model does not support Chat Completions API');
    assert.equal((await post(emb.endpoints[0]!, '/v1/completions', { prompt: 'hi' })).body.error.message, 'The model does not support Completions API');
  });
});

describe('embedAll (embedding_pool.py / scatter_gather_embeddings)', () => {
  it('scatters inputs round-robin in one list per endpoint and gathers them in input order', async () => {
    const sim = await fx.sim(4, { task: 'embed', embeddingDim: 16 });
    const texts = ['a', 'b', 'c', 'd', 'e', 'f'];
    const report = await embedAll(fx.pool(sim.endpoints), texts).done;
    assert.equal(report.error, null);
    assert.deepEqual(report.results.map((r) => [r.prompt, r.ok, r.embedding!.length]), texts.map((t) => [t, true, 16]));
    // test_embed_all_round_robin: input i on endpoint i % 4
    assert.deepEqual(report.results.map((r) => r.endpoint), [0, 1, 2, 3, 0, 1].map((i) => endpointId(sim.endpoints[i]!)));
    assert.deepEqual(embedCalls(sim), [1, 1, 1, 1]);
    assert.equal(report.summary.promptTokens, 6, "the servers' usage is counted");
    const again = await embedAll(fx.pool(sim.endpoints), ['c']).done;
    assert.deepEqual(again.results[0]!.embedding, report.results[2]!.embedding);
  });

  it('on a sub-pool (test_embed_pool_by_tag / select / slice): only its endpoints embed, round-robin from its index 0', async () => {
    const sim = await fx.sim(5, { task: 'embed', embeddingDim: 8 });
    const tagged = fx.pool(sim.endpoints.map((e, i) => ({ ...e, tags: { role: i % 2 ? 'llm' : 'embed' } })));
    assert.equal(subpool.byTag(tagged, 'role', 'embed').endpoints.length, 3);
    // Untagged: a pool with role=embed endpoints would embed on those alone (embedAll's default).
    const pool = fx.pool(sim.endpoints);
    const ids = sim.endpoints.map(endpointId);
    assert.equal(subpool.select(pool, [0, 2, 4]).endpoints.length, 3);
    assert.equal(subpool.slice(pool, 1, 4).endpoints.length, 3);
    assert.equal(pool.endpoints.length, 5, 'the parent keeps its size');
    const texts = ['one', 'two', 'three', 'four', 'five'];
    const selected = await embedAll(subpool.select(pool, [4, 1]), texts).done;
    assert.deepEqual(selected.results.map((r) => r.endpoint), [4, 1, 4, 1, 4].map((i) => ids[i]));
    const sliced = await embedAll(subpool.slice(pool, 1, 4), texts).done;
    assert.deepEqual(sliced.results.map((r) => r.endpoint), [1, 2, 3, 1, 2].map((i) => ids[i]));
    assert.ok([...selected.results, ...sliced.results].every((r) => r.ok && r.embedding!.length === 8));
    assert.deepEqual(embedCalls(sim), [0, 2, 1, 1, 1]);
  });

  it('fails over: a failing embedding server leaves no input without a vector', async () => {
    const sim = await fx.sim(3, { task: 'embed' });
    sim.servers[1]!.setFaults({ faultRate: 1, faultStatus: 500 });
    const report = await embedAll(fx.pool(sim.endpoints), ['a', 'b', 'c', 'd', 'e', 'f']).done;
    assert.ok(report.results.every((r) => r.ok && r.embedding!.length === 384));
    assert.ok(report.results.every((r) => r.endpoint !== endpointId(sim.endpoints[1]!)));
  });

  it('a hostfile mixing chat and embedding servers: each pattern picks the servers of its model', async () => {
    const chat = await fx.sim(2, { model: 'chat-model' });
    const emb = await fx.sim(2, { task: 'embed', model: 'emb-model' });
    // embedding servers listed first, tagged as Aurora-Swarm's hostfiles tag them
    const pool = fx.pool([...emb.endpoints.map((e) => ({ ...e, tags: { role: 'embed' } })), ...chat.endpoints]);
    const embedIds = emb.endpoints.map(endpointId);
    const vectors = await embedAll(pool, ['u', 'v', 'w']).done;
    assert.ok(vectors.results.every((r) => r.ok && embedIds.includes(r.endpoint!)));
    const answers = await scatterGather(pool, ['p', 'q', 'r'], { maxTokens: 20 }).done;
    assert.ok(answers.results.every((r) => r.ok && !embedIds.includes(r.endpoint!)));
    assert.equal(answers.summary.model, 'chat-model');
    const named = await embedAll(pool, ['u'], { model: 'emb-model' }).done;
    assert.ok(named.results[0]!.ok);
    const wrong = await embedAll(pool, ['u'], { model: 'chat-model' }).done;
    assert.match(wrong.results[0]!.error!, /does not support Embeddings API/);
  });
});

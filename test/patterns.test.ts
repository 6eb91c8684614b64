import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { broadcast, endpointId, mapGather, treeReduce } from '../src/core/index.ts';
import { Fixture } from './helpers/swarm.ts';

const fx = new Fixture();
afterEach(() => fx.close());

describe('mapGather', () => {
  it('fills {item} literally and keeps the item in input', async () => {
    const sim = await fx.sim(2);
    const report = await mapGather(fx.pool(sim.endpoints), ['a', '$&', 3], 'Tell me about {item}.', { maxTokens: 50 }).done;
    assert.deepEqual(report.results.map((r) => r.text), ['completion: Tell me about a.', 'completion: Tell me about $&.', 'completion: Tell me about 3.']);
    assert.deepEqual(report.results.map((r) => r.input.item), ['a', '$&', 3]);
  });
});

describe('broadcast', () => {
  it('asks every endpoint the same prompt, one chat request each', async () => {
    const sim = await fx.sim(3);
    const report = await broadcast(fx.pool(sim.endpoints), 'hello', { maxTokens: 20 }).done;
    assert.deepEqual(report.results.map((r) => r.endpoint), sim.endpoints.map(endpointId));
    assert.ok(report.results.every((r) => r.text === 'completion: hello'));
    assert.deepEqual(sim.servers.map((s) => s.stats().httpRequests['POST /v1/chat/completions 200']), [1, 1, 1]);
  });
});

describe('treeReduce', () => {
  it('reduces items level by level with the given fan-in', async () => {
    const sim = await fx.sim(4);
    const run = treeReduce(fx.pool(sim.endpoints), { prompt: 'leaf {item}', items: [1, 2, 3, 4, 5], reducePrompt: 'L{level}: {responses}', fanin: 2 }, { maxTokens: 500 });
    const report = await run.done;
    assert.equal(report.error, null);
    const outcome = report.outcome!;
    assert.deepEqual(outcome.levels.map((l) => l.texts.length), [5, 3, 2, 1]);
    assert.deepEqual(outcome.levels[0]!.texts, [1, 2, 3, 4, 5].map((i) => `completion: leaf ${i}`));
    assert.equal(outcome.levels[1]!.texts[0], 'completion: L1: completion: leaf 1\n---\ncompletion: leaf 2');
    assert.equal(outcome.text, outcome.levels[3]!.texts[0]);
    for (let i = 1; i <= 5; i++) assert.ok(outcome.text.includes(`leaf ${i}`));
    // 5 leaves + 3 + 2 + 1 reduce prompts, all on the chat path
    assert.equal(report.results.length, 11);
    assert.deepEqual(report.results.map((r) => r.level), [0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 3]);
    assert.equal(sim.servers.reduce((s, x) => s + (x.stats().httpRequests['POST /v1/chat/completions 200'] ?? 0), 0), 11);
  });

  it('substitutes placeholders once: an answer containing "{level}" stays literal', async () => {
    const sim = await fx.sim(2);
    const report = await treeReduce(fx.pool(sim.endpoints), { prompt: '{item}', items: ['{level}', 'b'], reducePrompt: '[{level}] {responses}', fanin: 2 }, { maxTokens: 500 }).done;
    assert.equal(report.outcome!.text, 'completion: [1] completion: {level}\n---\ncompletion: b');
  });

  it('broadcasts the prompt as leaves when there are no items; one leaf needs no reduction', async () => {
    const sim = await fx.sim(3);
    const report = await treeReduce(fx.pool(sim.endpoints), { prompt: 'hi', reducePrompt: '{responses}', fanin: 4 }, { maxTokens: 500 }).done;
    assert.deepEqual(report.outcome!.levels.map((l) => l.texts.length), [3, 1]);
    const single = await fx.sim(1);
    const one = await treeReduce(fx.pool(single.endpoints), { prompt: 'hi', reducePrompt: '{responses}' }, { maxTokens: 500 }).done;
    assert.equal(one.outcome!.text, 'completion: hi');
    assert.equal(one.results.length, 1);
  });

  it('keeps each answer\'s item (a leaf) or group (a reduce prompt) number, and says which answers it dropped and why', async () => {
    const sim = await fx.sim(2, { faultRate: 0.3, faultStatus: 400, seed: 2 });
    const items = Array.from({ length: 20 }, (_, i) => i + 1);
    const report = await treeReduce(fx.pool(sim.endpoints), { prompt: 'leaf {item}', items, reducePrompt: '{responses}', fanin: 4 }, { maxTokens: 500 }).done;
    const leaves = report.outcome?.levels[0] ?? { texts: [], indexes: [], lost: [] };
    const failed = report.results.filter((r) => (r.level ?? 0) === 0 && r.status === 'failed').map((r) => r.index);
    assert.ok(failed.length > 0 && failed.length < 20, `some leaves failed (${failed.length})`);
    assert.deepEqual(leaves.lost.map((l) => l.index), failed, 'the failed items, by number');
    assert.ok(leaves.lost.every((l) => /400/.test(l.reason)), 'with the server\'s message');
    assert.deepEqual([...leaves.indexes, ...failed].sort((a, b) => a - b), items.map((i) => i - 1), 'every item either goes on or is named as lost');
    leaves.indexes.forEach((index, k) => assert.equal(leaves.texts[k], `completion: leaf ${index + 1}`, 'each text keeps its item'));
    for (const l of report.outcome?.levels.slice(1) ?? []) assert.ok(l.indexes.every((g, k) => k === 0 || g > l.indexes[k - 1]!), 'groups in order');
  });

  it('drops failed answers between rounds and fails clearly when nothing survives', async () => {
    const sim = await fx.sim(2, { faultRate: 1, faultStatus: 400 });
    const report = await treeReduce(fx.pool(sim.endpoints), { prompt: '{item}', items: [1, 2, 3], reducePrompt: '{responses}' }).done;
    assert.equal(report.outcome, undefined);
    assert.match(report.error!, /nothing survived the reduction/);
    assert.ok(report.results.every((r) => r.status === 'failed'));
  });

  it('refuses a reduce prompt without {responses} and a fan-in below 2 before sending anything', async () => {
    const sim = await fx.sim(1);
    const pool = fx.pool(sim.endpoints);
    assert.throws(() => treeReduce(pool, { prompt: 'x', reducePrompt: 'merge them' }), /must contain \{responses\}/);
    assert.throws(() => treeReduce(pool, { prompt: 'x', reducePrompt: '{responses}', fanin: 1 }), /fan-in must be an integer of at least 2/);
    assert.equal(sim.servers[0]!.stats().generationRequests, 0);
  });
});

import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { aggregationOptions, blackboard, broadcast, broadcastAndReduce, endpointId, fanOutFanIn, pipeline, scatterGather, subpool, treeReduce, type Board, type Endpoint } from '../src/core/index.ts';
import { Fixture } from './helpers/swarm.ts';

/** Ports of Aurora-Swarm's tests/test_*.py pattern expectations, against our simulator (echo: `completion: <prompt>`). */
const fx = new Fixture();
afterEach(() => fx.close());

const chatCalls = (sim: { servers: Array<{ stats(): { httpRequests: Record<string, number> } }> }) =>
  sim.servers.map((s) => s.stats().httpRequests['POST /v1/chat/completions 200'] ?? 0);

/** conftest's mock_pool_tagged: 2 × role=hypotheses, 2 × role=critiques. */
const tagged = (endpoints: Endpoint[]) => endpoints.map((e, i) => ({ ...e, tags: { role: i < 2 ? 'hypotheses' : 'critiques' } }));

describe('sub-pools (pool.py by_tag / sample / select / slice)', () => {
  it('narrow the endpoints, index from 0, and share the parent limit and connections', async () => {
    const sim = await fx.sim(5);
    const pool = fx.pool(tagged(sim.endpoints));
    const ids = sim.endpoints.map(endpointId);
    assert.deepEqual(subpool.byTag(pool, 'role', 'critiques').endpoints.map((s) => s.id), ids.slice(2));
    assert.equal(subpool.byTag(pool, 'role', 'nobody').endpoints.length, 0);
    assert.deepEqual(subpool.select(pool, [4, 0, -1]).endpoints.map((s) => s.id), [ids[4], ids[0], ids[4]]);
    assert.throws(() => subpool.select(pool, [5]), /out of range/);
    const sl = subpool.slice(pool, 1, 4);
    assert.deepEqual(sl.endpoints.map((s) => s.id), ids.slice(1, 4));
    assert.deepEqual(subpool.slice(sl, 1).endpoints.map((s) => s.id), ids.slice(2, 4), 'a sub-pool of a sub-pool indexes from 0');
    assert.deepEqual(subpool.slice(pool, 3, 99).endpoints.length, 2);
    const sampled = subpool.sample(pool, 3);
    assert.equal(new Set(sampled.endpoints.map((s) => s.id)).size, 3);
    assert.equal(subpool.sample(pool, 99).endpoints.length, 5);
    assert.equal(sl.limit, pool.limit);
    assert.equal(sl.options, pool.options);
    assert.equal(pool.endpoints.length, 5);
  });

  it('send only to their own endpoints (test_vllm_pool: slice(2, 3) talks to endpoint 2), and closing one leaves the parent open', async () => {
    const sim = await fx.sim(4);
    const pool = fx.pool(sim.endpoints);
    const sub = subpool.slice(pool, 2, 3);
    const report = await scatterGather(sub, ['a', 'b', 'c'], { maxTokens: 20 }).done;
    assert.deepEqual(report.results.map((r) => r.endpoint), Array(3).fill(endpointId(sim.endpoints[2]!)));
    assert.deepEqual(sim.servers.map((s) => s.stats().promptsReceived), [0, 0, 3, 0]);
    await sub.close();
    const again = await broadcast(pool, 'still open', { maxTokens: 20 }).done;
    assert.ok(again.results.every((r) => r.ok));
  });
});

describe('sub-pools in patterns', () => {
  it('every pattern takes a sub-pool where it takes a pool; an empty one fails the run clearly', async () => {
    const sim = await fx.sim(4);
    const pool = fx.pool(tagged(sim.endpoints));
    const critics = subpool.byTag(pool, 'role', 'critiques');
    const reduced = await treeReduce(critics, { prompt: 'hi', reducePrompt: '{responses}', fanin: 2 }, { maxTokens: 200 }).done;
    assert.deepEqual(reduced.outcome!.levels.map((l) => l.texts.length), [2, 1]);
    assert.deepEqual(chatCalls(sim), [0, 0, 2, 1]);
    const merged = await fanOutFanIn(subpool.select(pool, [3, 1]), { prompt: 'p', collectPrompt: '{responses}', workers: 1 }, { maxTokens: 200 }).done;
    assert.deepEqual(merged.results.map((r) => r.endpoint), [endpointId(sim.endpoints[3]!), endpointId(sim.endpoints[3]!)], 'index 0 of the sub-pool is endpoint 3');
    const empty = await scatterGather(subpool.byTag(pool, 'role', 'judges'), ['x']).done;
    assert.match(empty.error!, /has no endpoints/);
  });
});

describe('aggregation budget (test_vllm_pool_config.py)', () => {
  it('defaults to twice the budget: 1024 when sized from the default 512, 2 × maxTokens when set; maxTokensAggregation wins', () => {
    assert.equal(aggregationOptions({}).defaultMaxTokens, 1024);
    assert.equal(aggregationOptions({ maxTokens: 100 }).maxTokens, 200);
    assert.equal(aggregationOptions({ maxTokens: 100, maxTokensAggregation: 7 }).maxTokens, 7);
  });
});

describe('broadcastAndReduce (test_broadcast.py)', () => {
  it('reduces the echoes of every agent into one answer containing the prompt', async () => {
    const sim = await fx.sim(4);
    const run = broadcastAndReduce(fx.pool(sim.endpoints), { prompt: 'Give a fact', reducePrompt: 'Summarise these responses:\n{responses}' }, { maxTokens: 200 });
    const report = await run.done;
    assert.equal(report.error, null);
    assert.equal(report.outcome!.answers.length, 4);
    assert.ok(report.outcome!.text.startsWith('completion: Summarise these responses:\ncompletion: Give a fact\n---\n'));
    assert.equal(report.outcome!.text.split('Give a fact').length - 1, 4);
    assert.deepEqual(report.results.map((r) => r.level), [0, 0, 0, 0, 1]);
  });

  it('sends the reduce step to reducerIndex, with the aggregation budget (2 × maxTokens, or maxTokensAggregation)', async () => {
    const sim = await fx.sim(3);
    const pool = fx.pool(sim.endpoints);
    const input = { prompt: 'one two three four five six seven eight', reducePrompt: 'merge {responses}', reducerIndex: 2 };
    const doubled = await broadcastAndReduce(pool, input, { maxTokens: 3 }).done;
    assert.deepEqual(doubled.results.map((r) => r.completionTokens), [3, 3, 3, 6]);
    assert.equal(doubled.results[3]!.endpoint, endpointId(sim.endpoints[2]!));
    const explicit = await broadcastAndReduce(pool, input, { maxTokens: 3, maxTokensAggregation: 5 }).done;
    assert.equal(explicit.results[3]!.completionTokens, 5);
  });

  it('refuses a reduce prompt without {responses}; fails clearly when every answer failed', async () => {
    const sim = await fx.sim(2, { faultRate: 1, faultStatus: 400 });
    const pool = fx.pool(sim.endpoints);
    assert.throws(() => broadcastAndReduce(pool, { prompt: 'x', reducePrompt: 'merge' }), /must contain \{responses\}/);
    const report = await broadcastAndReduce(pool, { prompt: 'x', reducePrompt: '{responses}' }).done;
    assert.match(report.error!, /every answer failed/);
  });
});

describe('pipeline and fanOutFanIn (test_pipeline.py)', () => {
  it('two stages: the output flows through and contains the initial input', async () => {
    const sim = await fx.sim(4);
    const stages = [
      { name: 'echo', template: 'Echo: {input}', agents: 2 },
      { name: 'summarise', template: 'Summarise: {input}', agents: 2 },
    ];
    const report = await pipeline(fx.pool(sim.endpoints), { stages, input: 'hello world' }, { maxTokens: 200 }).done;
    const out = report.outcome!;
    assert.equal(typeof out.output, 'string');
    assert.ok((out.output as string).includes('hello world'));
    assert.equal(out.stages[0]!.output, 'completion: Echo: hello world\ncompletion: Echo: hello world');
    assert.deepEqual(report.results.map((r) => [r.level, r.input.stage]), [[0, 'echo'], [0, 'echo'], [1, 'summarise'], [1, 'summarise']]);
    assert.deepEqual(chatCalls(sim), [2, 2, 0, 0], 'reused agents: every stage takes the first endpoints');
  });

  it('filter and transform reshape a stage; consecutive slices give each stage its own endpoints and can run out', async () => {
    const sim = await fx.sim(4);
    const stages = [
      { name: 'generate', template: 'Generate: {input}', agents: 3, filter: (r: { endpoint: string | null }) => r.endpoint !== endpointId(sim.endpoints[1]!) },
      { name: 'refine', template: 'Refine: {input}', agents: 2, transform: (rs: Array<{ text: string }>) => rs.map((r) => r.text.length) },
      { name: 'starved', template: '{input}', agents: 1 },
    ];
    const report = await pipeline(fx.pool(sim.endpoints), { stages, input: 'data', reuseAgents: false }, { maxTokens: 200 }).done;
    const out = report.outcome!;
    assert.deepEqual(out.stages.map((s) => s.endpoints), [3, 1, 0]);
    assert.equal(out.stages[0]!.output, 'completion: Generate: data\ncompletion: Generate: data');
    assert.deepEqual(out.stages[1]!.output, ['completion: Refine: completion: Generate: data\ncompletion: Generate: data'.length]);
    assert.equal(out.output, '');
    assert.deepEqual(chatCalls(sim), [1, 1, 1, 1]);
  });

  it('fanOutFanIn: the first n workers answer and endpoint 0 collects, containing the prompt', async () => {
    const sim = await fx.sim(4);
    const report = await fanOutFanIn(fx.pool(sim.endpoints), { prompt: 'Analyse X', collectPrompt: 'Collect:\n{responses}', workers: 2 }, { maxTokens: 200 }).done;
    assert.equal(report.error, null);
    assert.ok(report.outcome!.text.includes('Analyse X'));
    assert.equal(report.outcome!.answers.length, 2);
    assert.deepEqual(chatCalls(sim), [2, 1, 0, 0]);
  });
});

describe('blackboard (test_blackboard.py)', () => {
  const prompt = (role: string, board: Readonly<Board>) => `You are a ${role}. Board has ${Object.values(board).flat().length} entries. Contribute.`;

  it('2 proposers + 2 critics, 2 rounds: 4 entries per section, a snapshot per round', async () => {
    const sim = await fx.sim(4);
    const report = await blackboard(fx.pool(tagged(sim.endpoints)), { sections: ['hypotheses', 'critiques'], prompt, maxRounds: 2 }, { maxTokens: 200 }).done;
    const out = report.outcome!;
    assert.equal(out.board.hypotheses!.length, 4);
    assert.equal(out.board.critiques!.length, 4);
    assert.equal(out.rounds, 2);
    assert.deepEqual(out.snapshots.at(-1), { round: 2, board: out.board });
    assert.equal(out.snapshots[0]!.board.hypotheses!.length, 2, 'snapshots are copies');
    // critics in round 1 see the proposers' entries of the same round
    assert.equal(out.board.critiques![0], 'completion: You are a critiques. Board has 2 entries. Contribute.');
    assert.deepEqual(report.results.map((r) => [r.level, r.input.section]), [1, 1, 1, 1, 2, 2, 2, 2].map((l, i) => [l, i % 4 < 2 ? 'hypotheses' : 'critiques']));
  });

  it('plans once per run: an endpoint that is down is left out with one warning, not one per section and round', async () => {
    const sim = await fx.sim(4);
    await sim.servers[3]!.close();
    const run = blackboard(fx.pool(tagged(sim.endpoints)), { sections: ['hypotheses', 'critiques'], prompt, maxRounds: 3 }, { maxTokens: 200 });
    const warnings: string[] = [];
    run.on('warning', (w) => warnings.push(w));
    const out = (await run.done).outcome!;
    assert.deepEqual([out.board.hypotheses!.length, out.board.critiques!.length], [6, 3]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /left out 1 endpoint/);
  });

  it('a convergence function stops the session early; sections nobody serves are skipped', async () => {
    const sim = await fx.sim(4);
    const converged = (board: Readonly<Board>) => Object.values(board).flat().length >= 4;
    const report = await blackboard(fx.pool(tagged(sim.endpoints)), { sections: ['hypotheses', 'critiques', 'judges'], prompt, maxRounds: 10, converged }, { maxTokens: 200 }).done;
    const out = report.outcome!;
    assert.equal(out.rounds, 1);
    assert.deepEqual([out.board.hypotheses!.length, out.board.critiques!.length, out.board.judges!.length], [2, 2, 0]);
  });
});

describe('treeReduce (test_tree_reduce.py)', () => {
  it('8 agents, fan-in 4: succeeds with the reduce prompt in the text; items mode too', async () => {
    const sim = await fx.sim(8);
    const pool = fx.pool(sim.endpoints);
    const broadcastLeaves = await treeReduce(pool, { prompt: 'Say something', reducePrompt: 'Summarise:\n{responses}', fanin: 4 }, { maxTokens: 2000 }).done;
    assert.ok(broadcastLeaves.outcome!.text.includes('Summarise'));
    const items = await treeReduce(pool, { prompt: 'About {item}', items: ['a', 'b', 'c'], reducePrompt: 'Summarise:\n{responses}', fanin: 4 }, { maxTokens: 2000 }).done;
    assert.ok(items.outcome!.text.includes('completion:'));
  });

  it('reduce levels get the aggregation budget', async () => {
    const sim = await fx.sim(2);
    const report = await treeReduce(fx.pool(sim.endpoints), { prompt: 'one two three four five six', reducePrompt: 'merge {responses}', fanin: 2 }, { maxTokens: 3 }).done;
    assert.deepEqual(report.results.map((r) => r.completionTokens), [3, 3, 6]);
  });
});

/**
 * The panel's ported patterns (issue 12) under node: what Compose makes of its fields, what the
 * host accepts of a request, the steps the host builds from real runs on the simulator, and what
 * the panel's reducer does with them.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { blackboard, broadcast, endpointId, fanOutFanIn, namedStage, pipeline, scatterGather, subpool, templatedSession, type Aggregate, type Endpoint } from '../src/core/index.ts';
import { runRequest } from '../src/extension/panel/message-validation.ts';
import { blackboardSteps, broadcastSteps, fanOutSteps, pipelineSteps, treeReduceSteps } from '../src/extension/panel/pattern-steps.ts';
import type { PanelState, RunRequest } from '../src/panel/protocol.ts';
import { buildRunRequest, defaultCompose, summarize, type ComposeState } from '../webview/lib/compose.ts';
import { freshState } from '../webview/state.ts';
import { initialState, reduce } from '../webview/view-state.ts';
import { Fixture } from './helpers/swarm.ts';
import { CONTEXT, ENDPOINTS, finished, started } from './webview-harness/fixtures.ts';

const fx = new Fixture();
afterEach(() => fx.close());

const compose = (over: Partial<ComposeState>, patterns: Partial<ComposeState['patterns']> = {}): ComposeState => {
  const c = defaultCompose();
  return { ...c, ...over, patterns: { ...c.patterns, ...patterns } };
};

describe('Compose: the ported patterns and the routing choice', () => {
  it('builds each pattern\'s request, which the host accepts as it is', () => {
    const requests: Array<[ComposeState, RunRequest]> = [
      [
        compose({ pattern: 'broadcast', prompt: 'Yes or no?' }, { aggregate: 'top-k', k: 2, route: 'least-load' }),
        { pattern: 'broadcast', prompts: [], tags: [], batch: false, prompt: 'Yes or no?', route: 'least-load', patterns: { aggregate: 'top-k', k: 2 } },
      ],
      [
        compose({ pattern: 'fan-out-fan-in', prompt: 'Ideas?' }, { workers: '2' }),
        { pattern: 'fan-out-fan-in', prompts: [], tags: [], batch: false, prompt: 'Ideas?', patterns: { collectPrompt: 'Combine these answers into one:\n{responses}', workers: 2 } },
      ],
      [
        compose({ pattern: 'pipeline' }, { input: 'a poem', consecutive: true, stages: [{ name: ' ', template: 'Draft {input}', agents: 2, keep: '' }] }),
        { pattern: 'pipeline', prompts: [], tags: [], batch: false, patterns: { stages: [{ name: 'stage', template: 'Draft {input}', agents: 2 }], input: 'a poem', consecutive: true } },
      ],
      [
        compose({ pattern: 'blackboard', tags: ['rack=x2'] }, { sectionsText: ' hypotheses \n\ncritiques\n', until: 'DONE', route: 'prefix-aware' }),
        {
          pattern: 'blackboard', prompts: [], tags: [['rack', 'x2']], batch: false, route: 'prefix-aware',
          patterns: { sections: ['hypotheses', 'critiques'], boardPrompt: 'You write {section}. The board so far:\n{board}', maxRounds: 3, until: 'DONE' },
        },
      ],
    ];
    for (const [c, expected] of requests) {
      const request = buildRunRequest(c);
      assert.deepEqual(request, expected, c.pattern);
      assert.deepEqual(runRequest(JSON.parse(JSON.stringify(request))), expected, `${c.pattern}: the host keeps every field`);
    }
    assert.equal(buildRunRequest(compose({ pattern: 'scatter', prompts: [{ prompt: 'x' }] })).route, undefined, 'round-robin is the pool\'s default: not sent');
  });

  it('says why a ported pattern cannot run yet, and counts its first wave', () => {
    const problem = (c: ComposeState) => summarize(c, ENDPOINTS).problem;
    assert.equal(problem(compose({ pattern: 'fan-out-fan-in', prompt: 'p' }, { collectPrompt: 'no slot' })), 'The collect prompt must contain {responses}, where the answers go.');
    assert.equal(problem(compose({ pattern: 'fan-out-fan-in', prompt: 'p' }, { workers: '0' })), 'Workers must be a whole number of at least 1 (or empty: every endpoint).');
    assert.equal(summarize(compose({ pattern: 'fan-out-fan-in', prompt: 'p' }, { workers: '2' }), ENDPOINTS).count, 2);
    assert.match(problem(compose({ pattern: 'pipeline' }, { stages: [{ name: 'a', template: '{input}', agents: 1 }, { name: 'b', template: 'none', agents: 1 }] }))!, /^Stage 2: /);
    assert.match(problem(compose({ pattern: 'pipeline' }, { stages: [{ name: 'a', template: '{input}', agents: 1, keep: '(' }] }))!, /^Stage 1: /);
    assert.equal(problem(compose({ pattern: 'pipeline' }, { stages: [] })), 'Add a stage.');
    assert.equal(problem(compose({ pattern: 'blackboard' }, { sectionsText: 'two words' })), 'List the sections, one role name per line (letters, digits, . _ -).');
    assert.equal(problem(compose({ pattern: 'blackboard' }, { until: '[' })), '"Until" is not a valid regular expression.');
    assert.equal(problem(compose({ pattern: 'blackboard' })), null);
    assert.equal(problem(compose({ pattern: 'broadcast', prompt: 'p' }, { aggregate: 'top-k', k: 0 })), 'k must be a whole number of at least 1.');
  });

  it('the host refuses a request with a routing, aggregator or stage it does not know', () => {
    const base = { pattern: 'pipeline', prompts: [], tags: [], batch: false };
    assert.throws(() => runRequest({ ...base, route: 'fastest' }), /route must be one of round-robin, least-requests, least-load, kv-cache, prefix-aware/);
    assert.throws(() => runRequest({ ...base, patterns: { aggregate: 'mean' } }), /patterns\.aggregate must be one of vote, concat/);
    assert.throws(() => runRequest({ ...base, patterns: { stages: [{ name: 'a', template: '{input}', agents: 0 }] } }), /patterns\.stages\[0\]\.agents must be a whole number from 1/);
    assert.throws(() => runRequest({ ...base, patterns: { stages: [{ name: 'a', template: '{input}', agents: 1, transform: 'sum' }] } }), /patterns\.stages\[0\]\.transform/);
    assert.throws(() => runRequest({ ...base, pattern: 'swarm' }), /pattern must be one of scatter, map, broadcast, tree-reduce, fan-out-fan-in, pipeline, blackboard/);
    assert.deepEqual(runRequest({ ...base, patterns: { stages: [], smuggled: '<img>' } }).patterns, { stages: [] }, 'unknown fields are dropped');
  });

  it('the host holds the generation parameters to the same limits as the form and the CLI (vLLM\'s)', () => {
    const base = { pattern: 'scatter', prompts: ['p'], tags: [], batch: true };
    assert.throws(() => runRequest({ ...base, temperature: 2.5 }), /temperature must be a number from 0 to 2/);
    assert.throws(() => runRequest({ ...base, topP: 0 }), /top_p must be a number above 0, at most 1/);
    assert.throws(() => runRequest({ ...base, n: 16_385 }), /n must be a whole number from 1 to 16,384/);
    assert.throws(() => runRequest({ ...base, maxTokens: 0.5 }), /max_tokens must be a whole number of at least 1/);
    assert.throws(() => runRequest({ ...base, temperature: 0, n: 2 }), /n must be 1 when temperature is 0/);
    assert.throws(() => runRequest({ ...base, stop: ['END', ''] }), /stop string cannot be empty/);
    assert.throws(() => runRequest({ ...base, extra: { max_tokens: 9 } }), /max_tokens are set by Swarm Lab itself/);
    const r = runRequest({ ...base, model: '', system: '', temperature: 2, topP: 1, seed: -3, n: 16_384, stop: [], maxTokens: null, smuggled: 1 });
    assert.deepEqual((({ model, system, temperature, topP, seed, n, stop, maxTokens }) => ({ model, system, temperature, topP, seed, n, stop, maxTokens }))(r),
      { model: undefined, system: undefined, temperature: 2, topP: 1, seed: -3, n: 16_384, stop: undefined, maxTokens: undefined }, 'cleared fields are unset; the limits\' edges pass');
  });
});

describe('the steps the host shows, from real runs on the simulator (echo: "completion: <prompt>")', () => {
  it('a broadcast\'s answers with their vote, and merged answers with each one that was not JSON', async () => {
    const sim = await fx.sim(3);
    const pool = fx.pool(sim.endpoints);
    const report = await broadcast(pool, 'Yes', { maxTokens: 20 }).done;
    const vote = broadcastSteps('vote', report.results)!;
    assert.equal(vote.text, JSON.stringify({ winner: 'completion: Yes', confidence: 1, votes: 3, failed: 0, distribution: [{ answer: 'completion: Yes', votes: 3 }] }));
    assert.deepEqual(vote.levels.map((l) => [l.level, l.label, l.texts.length, l.aggregate?.name]), [[0, 'Answers · vote', 3, 'vote']]);
    const merged = broadcastSteps('merge', report.results)!.levels[0]!.aggregate as Extract<Aggregate, { name: 'merge' }>;
    assert.deepEqual(merged.items, []);
    assert.deepEqual(merged.errors.map((e) => [e.index, e.endpoint]), sim.endpoints.map((e, i) => [i, endpointId(e)]), 'each answer that is not JSON, by index and endpoint');
    const stats = broadcastSteps('stats', report.results)!.levels[0]!.aggregate as Extract<Aggregate, { name: 'stats' }>;
    assert.equal(stats.count, 0);
    assert.equal(stats.errors.length, 3);
    assert.equal(broadcastSteps('vote', report.results.map((r) => ({ ...r, ok: false }))), undefined, 'no answer, no steps');
  });

  it('tree-reduce with failed items: leaves keep their item numbers, the final answer names every item that failed or went with a failed group', () => {
    // 6 items, fan-in 2: items 2 and 5 (from 0) fail; then group 1 of level 1 (items 3 and 4) fails.
    const out = {
      text: 'final',
      levels: [
        { level: 0, texts: ['a0', 'a1', 'a3', 'a4'], indexes: [0, 1, 3, 4], lost: [{ index: 2, reason: 'HTTP 500' }, { index: 5, reason: 'blank answer' }] },
        { level: 1, texts: ['g0'], indexes: [0], lost: [{ index: 1, reason: 'HTTP 503' }] },
      ],
    };
    const view = treeReduceSteps(out, [], 2, true);
    assert.deepEqual(view.levels[0]!.names, ['item 1', 'item 2', 'item 4', 'item 5']);
    assert.deepEqual(view.levels[1]!.names, ['group 1']);
    assert.deepEqual(view.missing, [
      { level: 0, name: 'item 3', reason: 'HTTP 500' },
      { level: 0, name: 'item 6', reason: 'blank answer' },
      { level: 1, name: 'group 2', reason: 'HTTP 503', items: [3, 4] },
    ]);
  });

  it('fan-out/fan-in: the workers, then the collector', async () => {
    const sim = await fx.sim(3);
    const report = await fanOutFanIn(fx.pool(sim.endpoints), { prompt: 'idea', collectPrompt: 'join {responses}', workers: 2 }, { maxTokens: 200 }).done;
    const view = fanOutSteps(report.outcome!, report.results);
    assert.deepEqual(view.levels.map((l) => [l.label, l.texts]), [['Workers', ['completion: idea', 'completion: idea']], ['Collector', [view.text]]]);
    assert.deepEqual(view.levels[0]!.names, sim.endpoints.slice(0, 2).map(endpointId), 'workers named by the endpoint that answered');
    assert.deepEqual(view.missing, []);
    assert.equal(view.text, 'completion: join completion: idea\n---\ncompletion: idea');
  });

  it('a pipeline: each stage\'s answers, and the vote of the stage that votes', async () => {
    const sim = await fx.sim(3);
    const aggregates = new Map<number, Aggregate>();
    const stages = [
      namedStage({ name: 'draft', template: 'Draft: {input}', agents: 2, keep: /Draft/ }),
      namedStage({ name: 'pick', template: 'Pick: {input}', agents: 3, transform: 'vote' }, (a) => aggregates.set(1, a)),
    ];
    const report = await pipeline(fx.pool(sim.endpoints), { stages, input: 'a poem' }, { maxTokens: 200 }).done;
    const view = pipelineSteps(report.outcome!, report.results, aggregates);
    assert.deepEqual(view.levels.map((l) => [l.level, l.label, l.texts.length, l.aggregate?.name]), [[0, 'Stage 1 · draft (2 agents)', 2, undefined], [1, 'Stage 2 · pick (3 agents)', 3, 'vote']]);
    const vote = view.levels[1]!.aggregate as Extract<Aggregate, { name: 'vote' }>;
    assert.equal(vote.confidence, 1);
    assert.equal(JSON.parse(view.text).winner, vote.winner, 'the last stage\'s output is its vote');
  });

  it('a blackboard: each round\'s entries under their section, the board as the answer', async () => {
    const sim = await fx.sim(2);
    const endpoints: Endpoint[] = sim.endpoints.map((e, i) => ({ ...e, tags: { role: i ? 'critiques' : 'hypotheses' } }));
    const session = templatedSession(['hypotheses', 'critiques'], 'As {section}: {board}', 3, /round 2/);
    let round = 0;
    const report = await blackboard(fx.pool(endpoints), { ...session, converged: (b) => (++round, session.converged!(b) || round === 2) }, { maxTokens: 400 }).done;
    const view = blackboardSteps(report.outcome!, report.results);
    assert.deepEqual(view.levels.map((l) => [l.level, l.label, l.texts.map((t) => t.slice(0, t.indexOf(']') + 1))]), [
      [1, 'Round 1', ['[hypotheses]', '[critiques]']],
      [2, 'Round 2', ['[hypotheses]', '[critiques]']],
    ]);
    assert.match(view.text, /^## hypotheses\n- completion: As hypotheses/);
  });

  it('a routing choice reaches the core: the sub-pool routes by it, the pool keeps its own', async () => {
    const sim = await fx.sim(3);
    const pool = fx.pool(sim.endpoints);
    const routed = subpool.routedBy(pool, 'prefix-aware');
    assert.equal(routed.options.route, 'prefix-aware');
    assert.equal(pool.options.route, 'round-robin');
    assert.equal(subpool.slice(routed, 1).options.route, 'prefix-aware', 'sub-pools of it route the same way');
    const report = await scatterGather(routed, ['same prefix, first', 'same prefix, first'], { batch: false, maxTokens: 20 }).done;
    assert.ok(report.results.every((r) => r.ok));
    assert.equal(new Set(report.results.map((r) => r.endpoint)).size, 1, 'one prefix, one endpoint');
  });
});

describe('the panel reducer: a ported pattern\'s steps', () => {
  it('a pipeline\'s stages, with a stage\'s aggregate, land where tree-reduce levels do, and the steps tab opens', () => {
    const init: PanelState = { connected: true, source: 'sim', endpoints: ENDPOINTS, defaults: { model: '', maxTokens: null, batching: true }, history: [] };
    let s = reduce(initialState(freshState()), { type: 'init', state: init });
    s = reduce(s, started('p1', 5, 'pipeline of 2 stages', { pattern: 'pipeline', context: CONTEXT }));
    assert.equal(s.run?.pattern, 'pipeline');
    const vote: Aggregate = { name: 'vote', winner: 'b', confidence: 2 / 3, votes: 3, failed: 0, distribution: [{ answer: 'b', votes: 2 }, { answer: 'a', votes: 1 }] };
    const steps = { text: 'b', levels: [{ level: 0, label: 'Stage 1 · draft (2 agents)', texts: ['x', 'y'] }, { level: 1, label: 'Stage 2 · pick (3 agents)', texts: ['a', 'b', 'B'], aggregate: vote }] };
    s = reduce(s, finished('p1', { pattern: 'pipeline', reduce: steps }));
    assert.deepEqual(s.reduce, steps);
    assert.equal(s.ui.tab, 'tree');
  });
});

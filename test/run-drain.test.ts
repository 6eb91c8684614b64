import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { scatterGather, treeReduce, type PromptResult } from '../src/core/index.ts';
import { DRAINED, walltimeReached } from '../src/core/run/result.ts';
import { Fixture, prompts } from './helpers/swarm.ts';
import { until } from './helpers/patience.ts';

const fx = new Fixture();
afterEach(() => fx.close());

const generation = (servers: { stats(): { generationRequests: number } }[]) => servers.reduce((n, s) => n + s.stats().generationRequests, 0);
const statuses = (results: PromptResult[]) => results.map((r) => r.status);

/** Drain: finish what is in flight, send nothing new; the prompts not sent are cancelled as drained (resumable). */
describe('drain', () => {
  it('individual requests: the ones in flight finish, nothing more is sent, the rest end cancelled (drained), in input order', async () => {
    const sim = await fx.sim(2, { ttftMs: 40 });
    const run = scatterGather(fx.pool(sim.endpoints, { concurrency: 4 }), prompts(60), { batch: false, maxTokens: 5 });
    let seen = 0;
    run.on('result', () => {
      if (++seen === 3) run.drain();
    });
    const report = await run.done;
    assert.equal(report.drained, true);
    assert.equal(report.cancelled, false);
    assert.equal(report.results.length, 60);
    assert.deepEqual(report.results.map((r) => r.index), [...Array(60).keys()]);
    const ok = report.results.filter((r) => r.ok);
    // The three answered, and at most the concurrency's worth still in flight when drained, finished; nothing failed.
    assert.ok(ok.length >= 3 && ok.length <= 3 + 4, `${ok.length} answered`);
    assert.ok(ok.every((r) => r.text === `completion: ${r.prompt}`));
    assert.equal(report.results.filter((r) => r.status === 'failed').length, 0);
    const drained = report.results.filter((r) => r.status === 'cancelled');
    assert.equal(drained.length, 60 - ok.length);
    assert.ok(drained.every((r) => r.error === DRAINED && r.endpoint === null && r.attempts === 0), 'never sent');
    // Every request that left was answered: drained prompts were never sent.
    assert.equal(generation(sim.servers), ok.length);
    assert.equal(report.summary.cancelled, drained.length);
  });

  it('batched lists: both lists in flight finish, the six queued ones are never sent', async () => {
    const sim = await fx.sim(2, { ttftMs: 30 });
    const run = scatterGather(fx.pool(sim.endpoints, { concurrency: 2, maxPromptsPerRequest: 5 }), prompts(40), { batch: true, maxTokens: 5 });
    let drained = false;
    run.on('result', () => {
      if (!drained) run.drain();
      drained = true;
    });
    const report = await run.done;
    assert.equal(report.drained, true);
    assert.equal(generation(sim.servers), 2);
    assert.equal(report.results.filter((r) => r.ok).length, 10);
    assert.equal(report.results.filter((r) => r.status === 'cancelled' && r.error === DRAINED).length, 30);
    assert.deepEqual(report.results.map((r) => r.index), [...Array(40).keys()]);
  });

  it('a drain before the run sends anything sends nothing: every prompt is drained', async () => {
    const sim = await fx.sim(1);
    const run = scatterGather(fx.pool(sim.endpoints), prompts(5), { batch: false, maxTokens: 5 });
    run.drain();
    const report = await run.done;
    assert.deepEqual(statuses(report.results), Array(5).fill('cancelled'));
    assert.equal(generation(sim.servers), 0);
  });

  it('tree-reduce: the leaves in flight finish, no reduce round starts, and the run says it was drained', async () => {
    const sim = await fx.sim(2, { ttftMs: 30 });
    const run = treeReduce(fx.pool(sim.endpoints, { concurrency: 2 }), { prompt: 'leaf {item}', items: prompts(8), reducePrompt: 'merge {responses}', fanin: 2 }, { maxTokens: 5 });
    let asked = false;
    run.on('result', () => {
      if (!asked) run.drain();
      asked = true;
    });
    const report = await run.done;
    assert.equal(report.drained, true);
    assert.equal(report.error, 'drained before one answer was left');
    const leaves = report.results.filter((r) => r.level === 0);
    assert.equal(leaves.length, 8);
    assert.ok(leaves.filter((r) => r.ok).length >= 1 && leaves.filter((r) => r.ok).length <= 2);
    assert.ok(report.results.filter((r) => !r.ok).every((r) => r.error === DRAINED));
    assert.ok(report.results.filter((r) => (r.level ?? 0) > 0).every((r) => r.status === 'cancelled'));
    assert.equal(generation(sim.servers), report.results.filter((r) => r.ok).length);
  });

  it('a cancel after a drain aborts what is still in flight: cancelled wins', async () => {
    const sim = await fx.sim(1, { ttftMs: 60_000 });
    const run = scatterGather(fx.pool(sim.endpoints, { concurrency: 2 }), prompts(6), { batch: false, maxTokens: 5 });
    // Drained once both are at the server (drained before any left, the run would end drained at once, with nothing to cancel).
    await until(() => generation(sim.servers) === 2, 'both requests at the server');
    run.drain();
    // The two requests in flight hang: drain alone would wait for them; cancel ends it now.
    setImmediate(() => run.cancel());
    const report = await run.done;
    assert.equal(report.cancelled, true);
    assert.equal(report.drained, false);
    assert.deepEqual(statuses(report.results), Array(6).fill('cancelled'));
  });
});

/** A cancel with a reason (the job's walltime reached): the prompts in flight and unsent carry it, none fails. */
describe('cancel by walltime', () => {
  it('in flight and unsent end cancelled with the walltime reason, in input order; finished ones are kept; nothing fails', async () => {
    const sim = await fx.sim(2, { ttftMs: 40 });
    const run = scatterGather(fx.pool(sim.endpoints, { concurrency: 4 }), prompts(60), { batch: false, maxTokens: 5 });
    const reason = walltimeReached('42');
    let seen = 0;
    run.on('result', () => {
      if (++seen === 3) run.cancel(reason);
    });
    const report = await run.done;
    assert.equal(report.cancelled, true);
    assert.equal(report.error, reason);
    assert.deepEqual(report.results.map((r) => r.index), [...Array(60).keys()]);
    const ok = report.results.filter((r) => r.ok);
    const stopped = report.results.filter((r) => r.status === 'cancelled');
    assert.ok(ok.length >= 3, `${ok.length} answered`);
    assert.equal(ok.length + stopped.length, 60, 'nothing failed');
    assert.ok(stopped.every((r) => r.error === reason), JSON.stringify([...new Set(stopped.map((r) => r.error))]));
    // The ones in flight at the cancel name the endpoint they were on.
    assert.ok(stopped.some((r) => r.endpoint !== null), 'some were in flight');
    assert.match(reason, /^cancelled by walltime: job 42 reached its walltime \(--resume finishes it on the next job\)$/);
  });

  it('a plain cancel still says cancelled', async () => {
    const sim = await fx.sim(1, { ttftMs: 40 });
    const run = scatterGather(fx.pool(sim.endpoints, { concurrency: 2 }), prompts(10), { batch: false, maxTokens: 5 });
    run.on('result', () => run.cancel());
    const report = await run.done;
    assert.equal(report.error, 'cancelled');
    assert.ok(report.results.filter((r) => r.status === 'cancelled').every((r) => r.error === 'cancelled'));
  });
});

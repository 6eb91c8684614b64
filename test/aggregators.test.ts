import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { aggregate, aggregateText, bestOf, broadcast, concat, endpointId, failureReport, majorityVote, statistics, structuredMerge, topK, type AgentAnswer } from '../src/core/index.ts';
import { Fixture } from './helpers/swarm.ts';

const fx = new Fixture();
afterEach(() => fx.close());

/** Answers as a run returns them: index i, from endpoint e<i>; `null` is a failure. */
const answers = (...texts: Array<string | null>): AgentAnswer[] =>
  texts.map((t, index) => ({ index, endpoint: `e${index}`, ok: t !== null, text: t ?? '', error: t === null ? `boom ${index}` : null }));

describe('aggregators (Aurora-Swarm aggregators.py)', () => {
  it('majorityVote: trimmed, case-insensitive, the winner as first written, confidence over every answer asked for, with the votes it had', () => {
    const vote = majorityVote(answers(' Yes', 'yes ', 'NO', null, 'YES'));
    assert.equal(vote.winner, 'Yes');
    assert.equal(vote.confidence, 3 / 5, 'the failed answer is no vote for the winner');
    assert.deepEqual([vote.votes, vote.failed], [4, 1]);
    assert.deepEqual(vote.distribution, [{ answer: 'Yes', votes: 3 }, { answer: 'NO', votes: 1 }]);
    assert.deepEqual(majorityVote([]), { winner: '', confidence: 0, votes: 0, failed: 0, distribution: [] });
    assert.deepEqual(majorityVote(answers(null, null)), { winner: '', confidence: 0, votes: 0, failed: 2, distribution: [] });
    // One answer of four, three failed: a quarter, not certainty.
    assert.equal(majorityVote(answers(null, 'Paris', null, null)).confidence, 1 / 4);
    // Counter.most_common: the first answer seen wins a tie
    assert.equal(majorityVote(answers('b', 'a', 'a', 'b')).winner, 'b');
    // include_failures counts failed answers' (empty) text as votes
    assert.equal(majorityVote(answers(null, null, 'x'), true).winner, '');
  });

  it('concat joins usable texts with the separator (default newline)', () => {
    assert.equal(concat(answers('a', null, 'b')), 'a\nb');
    assert.equal(concat(answers('a', null, 'b'), ' | '), 'a | b');
    assert.equal(concat(answers('a', null, 'b'), ',', true), 'a,,b');
    assert.equal(concat([]), '');
  });

  it('bestOf picks the highest score among usable answers; none → null', () => {
    const list = answers('short', 'the longest one', null, 'medium x');
    assert.equal(bestOf(list, (a) => a.text.length)?.index, 1);
    assert.equal(bestOf(answers(null), (a) => a.text.length), null);
    assert.equal(bestOf(answers('aa', 'bb'), () => 1)?.index, 0);
  });

  it('topK returns the k best, descending, equals in input order', () => {
    const list = answers('bbb', 'a', null, 'cc', 'ddd');
    assert.deepEqual(topK(list, 2, (a) => a.text.length).map((a) => a.text), ['bbb', 'ddd']);
    assert.deepEqual(topK(list, 10, (a) => a.text.length).map((a) => a.text), ['bbb', 'ddd', 'cc', 'a']);
    assert.deepEqual(topK(list, 0, (a) => a.text.length), []);
  });

  it('structuredMerge flattens JSON arrays, appends other values, reports parse errors per answer', () => {
    const merged = structuredMerge(answers('[1, 2]', '{"k": 3}', 'not json', null, '[]', '"s"'));
    assert.deepEqual(merged.items, [1, 2, { k: 3 }, 's']);
    assert.equal(merged.errors.length, 1);
    assert.equal(merged.errors[0]!.index, 2);
    assert.equal(merged.errors[0]!.endpoint, 'e2');
    assert.match(merged.errors[0]!.error, /JSON/);
  });

  it('statistics: mean, sample std, median, min, max; one value has std 0; none gives zeros', () => {
    const s = statistics(answers('1', ' 2 ', '3', null, '4'));
    assert.deepEqual({ ...s, std: s.std.toFixed(6) }, { count: 4, mean: 2.5, std: Math.sqrt(5 / 3).toFixed(6), median: 2.5, min: 1, max: 4, errors: [] });
    assert.equal(statistics(answers('7')).std, 0);
    assert.deepEqual(statistics([]), { count: 0, mean: 0, std: 0, median: 0, min: 0, max: 0, errors: [] });
    const custom = statistics(answers('score: 10', 'score: 20'), (a) => Number(a.text.split(': ')[1]));
    assert.equal(custom.mean, 15);
    const mixed = statistics(answers('5', 'five', ''));
    assert.equal(mixed.count, 1);
    assert.deepEqual(mixed.errors.map((e) => e.index), [1, 2]);
  });

  it('failureReport counts every answer and lists failures with their errors', () => {
    assert.deepEqual(failureReport(answers('a', null, 'b', null)), {
      total: 4,
      successCount: 2,
      failureCount: 2,
      failures: [{ index: 1, endpoint: 'e1', error: 'boom 1' }, { index: 3, endpoint: 'e3', error: 'boom 3' }],
    });
  });
});

describe('named aggregates over a real broadcast (examples/broadcast_aggregators.py, against the simulator)', () => {
  it('skip the failed endpoint, which failure_report names; each name gives its aggregate and its text', async () => {
    const sim = await fx.sim(4);
    sim.servers[2]!.setFaults({ faultRate: 1, faultStatus: 400 });
    const report = await broadcast(fx.pool(sim.endpoints), ' Yes ', { maxTokens: 20 }).done;
    const failed = failureReport(report.results);
    assert.deepEqual([failed.total, failed.successCount, failed.failureCount], [4, 3, 1]);
    assert.deepEqual(failed.failures.map((f) => [f.index, f.endpoint]), [[2, endpointId(sim.endpoints[2]!)]]);
    const vote = aggregate('vote', report.results);
    const expected = { winner: 'completion:  Yes', confidence: 3 / 4, votes: 3, failed: 1, distribution: [{ answer: 'completion:  Yes', votes: 3 }] };
    assert.deepEqual(vote, { name: 'vote', ...expected });
    assert.equal(aggregateText(vote), JSON.stringify(expected));
    assert.equal(aggregateText(aggregate('concat', report.results)), Array(3).fill('completion:  Yes').join('\n'));
    const best = aggregate('best-of', report.results);
    assert.equal(best.name === 'best-of' && best.best?.index, 0, 'equals: the first answer');
    const top = aggregate('top-k', report.results, 2);
    assert.deepEqual(top.name === 'top-k' && top.top.map((t) => t.index), [0, 1]);
    assert.equal(aggregateText(top), JSON.stringify([0, 1].map((i) => ({ endpoint: endpointId(sim.endpoints[i]!), text: 'completion:  Yes' }))));
    const merged = aggregate('merge', report.results);
    assert.deepEqual(merged.name === 'merge' && merged.errors.map((e) => e.index), [0, 1, 3], 'each answer that is not JSON, failed ones skipped');
    const stats = aggregate('stats', report.results);
    assert.deepEqual(stats.name === 'stats' && [stats.count, stats.errors.length], [0, 3]);
  });
});

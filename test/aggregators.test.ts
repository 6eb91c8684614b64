import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bestOf, concat, failureReport, majorityVote, statistics, structuredMerge, topK, type AgentAnswer } from '../src/core/index.ts';

/** Answers as a run returns them: index i, from endpoint e<i>; `null` is a failure. */
const answers = (...texts: Array<string | null>): AgentAnswer[] =>
  texts.map((t, index) => ({ index, endpoint: `e${index}`, ok: t !== null, text: t ?? '', error: t === null ? `boom ${index}` : null }));

describe('aggregators (Aurora-Swarm aggregators.py)', () => {
  it('majorityVote: trimmed, case-insensitive, confidence over the usable answers, with the distribution', () => {
    const vote = majorityVote(answers(' Yes', 'yes ', 'NO', null, 'YES'));
    assert.equal(vote.winner, 'yes');
    assert.equal(vote.confidence, 3 / 4);
    assert.deepEqual(vote.distribution, [{ answer: 'yes', votes: 3 }, { answer: 'no', votes: 1 }]);
    assert.deepEqual(majorityVote([]), { winner: '', confidence: 0, distribution: [] });
    assert.deepEqual(majorityVote(answers(null, null)), { winner: '', confidence: 0, distribution: [] });
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

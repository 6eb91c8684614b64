/**
 * The panel's inbox under node: the host's messages handed on in the order they came, a progress
 * message's JSONL rows read a slice at a time with the page's turn between slices, and rows that
 * cannot be read skipped and said once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { HostMessage, ResultRow } from '../src/panel/protocol.ts';
import { rowsJsonl } from '../src/panel/result-rows.ts';
import { Inbox, type Inbound } from '../webview/lib/inbox.ts';

const row = (index: number): ResultRow =>
  ({ index, prompt: `p${index}`, status: 'ok', ok: true, text: `answer ${index}`, reasoning: null, error: null, endpoint: 'e:1', finishReason: 'stop', promptTokens: 3, completionTokens: 2, attempts: 1, timings: { queuedMs: 0, sentMs: 0, firstByteMs: 1, firstTokenMs: null, doneMs: 5 }, input: {} }) satisfies ResultRow;
const progress = (rows: string, done: number): HostMessage => ({ type: 'runProgress', runId: 'r', done, ok: done, failed: 0, total: 5000, elapsedMs: 10, resultsJsonl: rows, seq: done });
const finished: HostMessage = { type: 'history', history: [] };

/** The promises made so far have settled (the page's task is over). */
const settled = () => new Promise((r) => setImmediate(r));

/** An inbox whose page turns are counted and taken by hand (`turn()` runs the page's next task). */
function inbox(sliceMs?: number) {
  const got: Inbound[] = [];
  const bad: Array<[number, string]> = [];
  const turns: Array<() => void> = [];
  const box = new Inbox((m) => got.push(m), { badRows: (n, why) => bad.push([n, why]), yieldToPage: () => new Promise<void>((r) => turns.push(r)), ...(sliceMs === undefined ? {} : { sliceMs }) });
  const turn = async () => {
    turns.shift()?.();
    await settled();
  };
  return { box, got, bad, turns, turn };
}

describe('the panel inbox', () => {
  test('a message with no rows is handed on in the task that took it', () => {
    const { box, got } = inbox();
    box.take(progress('', 0));
    box.take(finished);
    assert.deepEqual(got.map((m) => m.type), ['runProgress', 'history']);
    assert.deepEqual((got[0] as Extract<Inbound, { type: 'runProgress' }>).results, []);
  });

  test('5,000 rows are read in slices, the page given its turn between them; what came after waits for the last slice', async () => {
    const { box, got, turns, turn } = inbox(0); // a budget of 0 ms: a slice is the fewest lines between looks at the clock
    const rows = Array.from({ length: 5000 }, (_, i) => row(i));
    box.take(progress(rowsJsonl(rows), 5000));
    box.take(finished);
    let slices = 1;
    while (turns.length) {
      assert.equal(got.length, 0, `nothing handed on while rows are read (slice ${slices})`);
      await turn();
      slices++;
    }
    assert.ok(slices >= 100, `read in ${slices} slices`);
    assert.deepEqual(got.map((m) => m.type), ['runProgress', 'history'], 'in the order they came');
    const p = got[0] as Extract<Inbound, { type: 'runProgress' }>;
    assert.deepEqual(p.results, rows);
    assert.equal(p.seq, 5000);
    assert.ok(!('resultsJsonl' in p), 'handed on with its rows read, not their text');
  });

  test('with the default budget a small message is read whole, without giving the page a turn', async () => {
    const { box, got, turns } = inbox();
    box.take(progress(rowsJsonl([row(0), row(1)]), 2));
    await settled();
    assert.equal(turns.length, 0);
    assert.equal((got[0] as Extract<Inbound, { type: 'runProgress' }>).results.length, 2);
  });

  test('rows that cannot be read are skipped and said once, with why; the others are kept', async () => {
    const { box, got, bad } = inbox();
    const lines = [JSON.stringify(row(0)), '{"index": 1, "status": "ok"', JSON.stringify({ ...row(2), status: 'maybe' }), JSON.stringify({ ...row(3), index: -1 }), '[]', JSON.stringify(row(5))];
    box.take(progress(lines.join('\n'), 6));
    await settled();
    assert.deepEqual((got[0] as Extract<Inbound, { type: 'runProgress' }>).results.map((r) => r.index), [0, 5]);
    assert.equal(bad.length, 1);
    assert.equal(bad[0]![0], 4);
    assert.match(bad[0]![1], /JSON|position/);
  });

  test('a row without its prompt (a results file of the CLI\'s) gets an empty one', async () => {
    const { box, got } = inbox();
    const { prompt: _, ...bare } = row(0) as ResultRow & { prompt: string };
    box.take(progress(JSON.stringify(bare), 1));
    await settled();
    assert.equal((got[0] as Extract<Inbound, { type: 'runProgress' }>).results[0]!.prompt, '');
  });
});

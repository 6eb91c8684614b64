/**
 * Flow control of a run's progress, host → webview (issue 21): the host (LiveRows) has one
 * `runProgress` in flight at a time, the next waits for the page's `progressSeen` and carries every
 * row that came meanwhile; the end is never held back. A real run on the simulator feeds the host's
 * side; the page's side is the panel in headless Chromium on the harness page.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { scatterGather, type Run } from '../src/core/index.ts';
import { LiveRows } from '../src/extension/panel/live-rows.ts';
import type { HostMessage, PanelMessage, ResultRow } from '../src/panel/protocol.ts';
import { parseRows } from '../src/panel/result-rows.ts';
import { Fixture, prompts } from './helpers/swarm.ts';
import { patience, until } from './helpers/patience.ts';
import { host, panelSession, type HarnessWindow } from './webview-harness/session.ts';
import { initState, jsonl, started } from './webview-harness/fixtures.ts';

declare const window: HarnessWindow;
declare const document: { querySelector(s: string): { textContent: string | null } | null };
type Progress = Extract<HostMessage, { type: 'runProgress' }>;

const fx = new Fixture();
afterEach(() => fx.close());

/** A scatter of `n` prompts, half of them to an endpoint that never answers (no hedge): the run goes until cancelled. */
async function goingRun(n: number): Promise<Run<unknown>> {
  const fast = await fx.sim(1, { ttftMs: 5 });
  const stuck = await fx.sim(1, { hang: true });
  return scatterGather(fx.pool([...fast.endpoints, ...stuck.endpoints], { concurrency: 256, hedge: false }), prompts(n), { batch: false, maxTokens: 4 }) as Run<unknown>;
}

/** LiveRows of `run` whose messages are kept in `said`. */
function follow(run: Run<unknown>, total: number): { live: LiveRows; said: Progress[] } {
  const said: Progress[] = [];
  const live = new LiveRows('r1', run, total, (m) => {
    if (m.type === 'runProgress') said.push(m);
    return true;
  });
  run.on('result', (r) => live.add({ ...r, prompt: `p${r.index}` }));
  return { live, said };
}

const rowCount = (p: Progress) => parseRows(p.resultsJsonl).length;
const indices = (said: Progress[]) => said.flatMap((p) => parseRows(p.resultsJsonl).map((r) => r.index)).sort((a, b) => a - b);

describe('progress flow control, host side (a real run on the simulator)', { timeout: patience(60_000) }, () => {
  it('sends no progress while the page has not drawn the last one, then one with every row since; the end goes unasked', async () => {
    const run = await goingRun(200);
    const held = follow(run, 200);
    // Beside it, a page that draws each message at once: how many messages the same run gives meanwhile.
    const eager = follow(run, 200);
    const answer = () => {
      const last = eager.said.at(-1);
      if (last?.seq !== undefined) eager.live.seen(last.seq);
    };
    // The page answers the first (a page that never answered is not waited for long), then draws slowly.
    const opening = await until(() => held.said[0], 'the first progress message');
    assert.equal(typeof opening.seq, 'number', 'numbered, for the page to answer');
    held.live.seen(opening.seq!);
    const first = await until(() => held.said[1], 'the next, once the first is drawn');
    const start = eager.said.length;
    await until(() => (answer(), eager.said.length >= start + 3), 'three progress messages to a page that answers');
    assert.equal(held.said.length, 2, 'nothing more while the last is not drawn');

    // A word about another message (an earlier page's) frees nothing.
    held.live.seen(first.seq! + 1_000);
    const count = eager.said.length;
    await until(() => (answer(), eager.said.length >= count + 2), 'two more messages to the page that answers');
    assert.equal(held.said.length, 2, 'a stale progressSeen is ignored');

    // Drawn: the next goes, with every row that came meanwhile.
    const doneBefore = run.progress.done;
    held.live.seen(first.seq!);
    const second = await until(() => held.said[2], 'the next progress message');
    const sentBefore = rowCount(opening) + rowCount(first);
    assert.ok(rowCount(second) >= doneBefore - sentBefore, `it carries the rows held back (${rowCount(second)} rows, ${doneBefore} done before, ${sentBefore} sent before)`);
    assert.ok(second.seq! > first.seq!);

    // Not drawn again, and the run ends: the last rows go without waiting, unnumbered.
    run.cancel();
    await run.done;
    held.live.drain();
    eager.live.drain();
    const last = held.said.at(-1)!;
    assert.notEqual(last, second, 'the last progress went though the page had not drawn the one before');
    assert.equal(last.seq, undefined, 'the last is not waited for');
    assert.equal(last.done, 200);
    assert.deepEqual(indices(held.said), [...Array(200).keys()], 'every row once');
    assert.deepEqual(indices(eager.said), [...Array(200).keys()]);
  });

  it('a page that says ready again gets every row at once, and the flow goes on from its answer', async () => {
    const run = await goingRun(100);
    const { live, said } = follow(run, 100);
    await until(() => said[0] && run.progress.done >= 20, 'rows while the first message is not drawn');
    const n = said.length;
    live.resync();
    const all = said[n]!;
    assert.ok(rowCount(all) >= 20 && all.seq !== undefined, 'every row so far, numbered');
    live.seen(said[0]!.seq!);
    live.seen(all.seq!);
    await until(() => said[n + 1], 'the flow goes on from the new page\'s answer');
    run.cancel();
    await run.done;
    live.drain();
    assert.deepEqual([...new Set(indices(said.slice(n)))], [...Array(100).keys()], 'the resync and what followed hold every row');
  });
});

describe('progress flow control, page side (the panel in Chromium)', { timeout: patience(120_000) }, () => {
  const session = panelSession();

  it('the page says progressSeen with each message\'s number once it has drawn its rows; an unnumbered one is not answered', async () => {
    const { page, problems } = await session.open('dark', { width: 1280, height: 800 });
    await host(page, { type: 'init', state: initState() });
    await host(page, started('r1', 6, 'six · 6 prompts', { prompts: Array.from({ length: 6 }, (_, i) => `question ${i}`) }));
    const rowsOf = (from: number, to: number): ResultRow[] =>
      Array.from({ length: to - from }, (_, k) => ({ index: from + k, status: 'ok', ok: true, text: `answer ${from + k}`, reasoning: null, error: null, endpoint: 'gpu01:8000', finishReason: 'stop', promptTokens: 3, completionTokens: 4, attempts: 1, timings: { queuedMs: 1, sentMs: 2, firstByteMs: 5, firstTokenMs: null, doneMs: 9 }, input: {}, prompt: `question ${from + k}` }));
    // When the page answers, what its run bar says (read in the page as the answer is posted).
    await page.evaluate(() => {
      const w = window as unknown as HarnessWindow & { __seen: Array<{ seq: number; shown: string }> };
      w.__seen = [];
      const sent = w.__host.sent;
      const push = sent.push.bind(sent);
      sent.push = (...items: PanelMessage[]) => {
        for (const m of items) if (m.type === 'progressSeen') w.__seen.push({ seq: m.seq, shown: document.querySelector('#progress-done')?.textContent ?? '' });
        return push(...items);
      };
    });
    const seen = () => page.evaluate(() => (window as unknown as { __seen: Array<{ seq: number; shown: string }> }).__seen);
    await host(page, { type: 'runProgress', runId: 'r1', done: 2, ok: 2, failed: 0, total: 6, elapsedMs: 100, resultsJsonl: jsonl(rowsOf(0, 2)), seq: 41 });
    await until(async () => (await seen()).length === 1, 'the answer to message 41');
    await host(page, { type: 'runProgress', runId: 'r1', done: 4, ok: 4, failed: 0, total: 6, elapsedMs: 200, resultsJsonl: jsonl(rowsOf(2, 4)) });
    await host(page, { type: 'runProgress', runId: 'r1', done: 6, ok: 6, failed: 0, total: 6, elapsedMs: 300, resultsJsonl: jsonl(rowsOf(4, 6)), seq: 42 });
    await until(async () => (await seen()).length === 2, 'the answer to message 42');
    assert.deepEqual(await seen(), [
      { seq: 41, shown: '2' },
      { seq: 42, shown: '6' },
    ], 'each numbered message answered once, after the page drew it; the unnumbered one not at all');
    const answers = (await page.evaluate(() => window.__host.sent)).filter((m) => m.type === 'progressSeen');
    assert.deepEqual(answers.map((m) => m.type === 'progressSeen' && m.runId), ['r1', 'r1']);
    assert.deepEqual(problems, []);
  });
});

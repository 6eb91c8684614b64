/**
 * Live rows cross to the page light (result-rows.ts lightRow): long answers cut to their start, the
 * prompts runStarted listed left out. In headless Chromium on the harness page: the table shows the
 * start of a cut answer and its prompt; opening the row, copying its answer and a search each ask the
 * host for the rows whole (`fullRows`), and then show and use all of them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { PanelMessage } from '../src/panel/protocol.ts';
import { lightRowsJsonl, parseResultRow, PREVIEW_CHARS, rowsJsonl } from '../src/panel/result-rows.ts';
import { BURST_ROWS } from '../src/extension/panel/live-rows.ts';
import { initState, row, started } from './webview-harness/fixtures.ts';
import { join } from 'node:path';
import { clearSent, host, panelSession, SHOTS } from './webview-harness/session.ts';
import { patience } from './helpers/patience.ts';

declare const window: any;
declare const document: any;
type Request = Extract<PanelMessage, { type: 'request' }>;

/** Waits for the page's next request of `method` (after the last clearSent). */
async function requested(page: Page, method: string): Promise<Request> {
  const handle = await page.waitForFunction((m) => window.__host.sent.find((x: Request) => x.type === 'request' && x.method === m) ?? null, method);
  return (await handle.jsonValue()) as Request;
}

describe('light rows, read back', () => {
  it('a row with a short answer reads back whole (its listed prompt from runStarted); a long one cut, said in `cut`', () => {
    const nulls = row(0, { text: 'short', endpoint: null, finishReason: null, promptTokens: null, completionTokens: null, reasoning: null, error: null, timings: { queuedMs: 1, sentMs: null, firstByteMs: null, firstTokenMs: null, doneMs: 2 } });
    const failed = row(1, { status: 'failed', ok: false, text: '', error: 'HTTP 500: boom', input: { id: 'x' } });
    const truncated = row(2, { status: 'failed', ok: false, error: 'truncated', reasoning: 'r'.repeat(500), texts: ['a', 'b'] });
    const long = row(3, { text: 'y'.repeat(1000), prompt: 'not the listed one' });
    const prompts = ['prompt 0', 'prompt 1', 'prompt 2', 'prompt 3'];
    const back = lightRowsJsonl([nulls, failed, truncated, long], prompts).split('\n').map(parseResultRow);
    assert.deepEqual(back[0], { ...nulls, prompt: '' }, 'nulls and ok put back; the listed prompt left to the page');
    assert.deepEqual(back[1], { ...failed, prompt: '' });
    const { texts: _texts, ...cutTruncated } = truncated;
    assert.deepEqual(back[2], { ...cutTruncated, prompt: '', reasoning: 'r'.repeat(PREVIEW_CHARS), cut: { reasoning: 500, texts: 2 } });
    assert.deepEqual(back[3], { ...long, text: 'y'.repeat(PREVIEW_CHARS), cut: { text: 1000 } }, 'a prompt other than the listed one goes with its row');
    assert.throws(() => parseResultRow('{"index":0,"status":"ok"}'), /no timings/);
    assert.throws(() => parseResultRow('[0,"ok","x",null,null,null,null,1]'), /no timings/);
    // The fields every row has go by position: a cut row is its answer's start and ~110 bytes more.
    const line = lightRowsJsonl([long], undefined);
    assert.ok(line.length <= PREVIEW_CHARS + 160, `${line.length} bytes: ${line}`);
  });
});

describe('webview: live rows come light, and whole when needed', { timeout: patience(120_000) }, () => {
  const session = panelSession();

  it('a cut answer shows its start; opening the row, copying it and a search ask for it whole', async () => {
    const { page, problems } = await session.open('light', { width: 1280, height: 800 });
    await host(page, { type: 'init', state: initState() });
    const prompts = ['first question', 'second question', 'third question'];
    const long = (i: number) => `answer ${i} ${'lorem ipsum '.repeat(40)}needle-${i} the end`;
    const rows = [row(0, { prompt: prompts[0]!, text: long(0) }), row(1, { prompt: prompts[1]!, text: 'short answer 1' }), row(2, { prompt: prompts[2]!, text: long(2) })];
    await host(page, started('L1', 3, 'light rows', { prompts }));
    const light = lightRowsJsonl(rows, prompts);
    assert.ok(!light.includes('needle') && !light.includes('question'), 'the message carries neither the cut tails nor the listed prompts');
    await host(page, { type: 'runProgress', runId: 'L1', done: 3, ok: 3, failed: 0, total: 3, elapsedMs: 50, resultsJsonl: light });
    await page.locator('#progress-done', { hasText: '3' }).waitFor();
    const cells = (cls: string) => page.locator(`#results-table .vl-row:not([hidden]) .c-${cls}`).allTextContents();
    await page.waitForFunction(() => document.querySelectorAll("#results-table .vl-row:not([hidden]) .c-resp").length === 3);
    assert.deepEqual(await cells('prompt'), prompts, 'the prompts runStarted listed');
    const resp = await cells('resp');
    assert.equal(resp[0], `${long(0).slice(0, PREVIEW_CHARS)}…`, 'a cut answer: its start, and a mark that there is more');
    assert.equal(resp[1], 'short answer 1', 'a short answer whole');

    // Opening row 0 asks for it whole and shows all of it once the host answers.
    await clearSent(page);
    await page.locator('#results-table .rt-scroll').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    const open = page.locator('#results-table .vl-row[aria-expanded="true"]');
    await open.getByText('Loading the whole answer…').waitFor();
    await page.screenshot({ path: join(SHOTS, 'results-light-row-loading.png') });
    const ask = await requested(page, 'fullRows');
    assert.deepEqual(ask.params, { runId: 'L1', indices: [0] });
    await host(page, { type: 'reply', requestId: ask.requestId, ok: true, value: rowsJsonl([rows[0]!]) });
    await open.locator('pre', { hasText: 'needle-0 the end' }).waitFor();
    assert.equal(await open.getByText('Loading the whole answer…').count(), 0);
    await page.screenshot({ path: join(SHOTS, 'results-light-row-whole.png') });

    // Copying row 2's answer ('c' on the row) copies all of it: asked for whole first.
    await clearSent(page);
    await page.keyboard.press('Escape');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('c');
    const ask2 = await requested(page, 'fullRows');
    assert.deepEqual(ask2.params, { runId: 'L1', indices: [2] });
    await host(page, { type: 'reply', requestId: ask2.requestId, ok: true, value: rowsJsonl([rows[2]!]) });
    const copy = await requested(page, 'copy');
    assert.equal((copy.params as { text: string }).text, long(2));

    // A search reads whole answers: with none cut left, it asks nothing more and finds the tails.
    await clearSent(page);
    await page.locator('#search input').fill('needle-2');
    await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '1');
    assert.deepEqual(await cells('idx'), ['3']);
    assert.equal((await page.evaluate(() => window.__host.sent.filter((x: Request) => x.method === 'fullRows').length)) as number, 0, 'nothing cut is left to ask for');
    assert.deepEqual(problems, []);
  });

  it('a burst of rows comes without answers: the rows in view are asked for whole, once, in one request, and then show theirs', async () => {
    const { page, problems } = await session.open('light', { width: 400, height: 700 });
    await host(page, { type: 'init', state: initState() });
    const n = BURST_ROWS * 3;
    const rows = Array.from({ length: n }, (_, i) => row(i, { text: `answer ${i} ${'z'.repeat(300)}` }));
    const burst = lightRowsJsonl(rows, undefined, 0);
    assert.ok(!burst.includes('answer '), 'no answer crosses');
    await host(page, started('B1', n, 'a burst'));
    await clearSent(page);
    await host(page, { type: 'runProgress', runId: 'B1', done: n, ok: n, failed: 0, total: n, elapsedMs: 50, resultsJsonl: burst });
    await page.locator('#progress-done', { hasText: n.toLocaleString('en-US') }).waitFor();
    await page.locator('vscode-tab-header[data-tab="results"]').click();
    const ask = await requested(page, 'fullRows');
    const asked = (ask.params as { indices: number[] }).indices;
    const shown = await page.evaluate(() => [...document.querySelectorAll('#results-table .vl-row:not([hidden])')].map((r: any) => Number(r.dataset.index)));
    assert.ok(shown.length > 5 && shown.length < n, `${shown.length} rows drawn`);
    assert.deepEqual([...asked].sort((a, b) => a - b), [...shown].sort((a, b) => a - b), 'the rows drawn, and only those');
    await page.screenshot({ path: join(SHOTS, 'results-burst-asking.png') });
    await host(page, { type: 'reply', requestId: ask.requestId, ok: true, value: rowsJsonl(asked.map((i) => rows[i]!)) });
    await page.locator('#results-table .vl-row:not([hidden]) .c-resp', { hasText: `answer 0 zzz` }).first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'results-burst-answered.png') });
    // Drawn again (a frame, a progress message): nothing is asked twice.
    await host(page, { type: 'runProgress', runId: 'B1', done: n, ok: n, failed: 0, total: n, elapsedMs: 60, resultsJsonl: '' });
    await page.evaluate(() => new Promise((r) => window.requestAnimationFrame(() => window.requestAnimationFrame(r))));
    assert.equal((await page.evaluate(() => window.__host.sent.filter((x: Request) => x.method === 'fullRows').length)) as number, 1);
    assert.deepEqual(problems, []);
  });

  it('a search while rows are cut asks for every row whole and then matches past their start', async () => {
    const { page, problems } = await session.open('dark', { width: 1280, height: 800 });
    await host(page, { type: 'init', state: initState() });
    const rows = Array.from({ length: 50 }, (_, i) => row(i, { text: `answer ${i} ${'x'.repeat(200)} tail-${i}` }));
    await host(page, started('L2', 50, 'fifty cut rows'));
    await host(page, { type: 'runProgress', runId: 'L2', done: 50, ok: 50, failed: 0, total: 50, elapsedMs: 50, resultsJsonl: lightRowsJsonl(rows, undefined) });
    await page.locator('#progress-done', { hasText: '50' }).waitFor();
    await clearSent(page);
    await page.locator('#search input').fill('tail-17');
    const ask = await requested(page, 'fullRows');
    assert.deepEqual(ask.params, { runId: 'L2', indices: null });
    await host(page, { type: 'reply', requestId: ask.requestId, ok: true, value: rowsJsonl(rows) });
    await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '1');
    assert.deepEqual((await page.locator('#results-table .vl-row:not([hidden]) .c-idx').allTextContents()).map((t) => t.trim()), ['18'], 'found past the start it had');
    assert.deepEqual(problems, []);
  });
});

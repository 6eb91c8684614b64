/**
 * The panel's ported patterns (issue 12) in real headless Chromium, on the harness page (the
 * host's CSP, the built dist/webview bundle, host.js playing the extension): Compose's pattern
 * fields and routing choice make the request; a run's stages and aggregates show as text.
 * Screenshots (for a person to look at) go to .tmp/screenshots/patterns-*.png.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { Aggregate, PanelMessage, ReduceView, RunRequest } from '../src/panel/protocol.ts';
import type { PanelPage } from './webview-harness/browser.ts';
import { finished, initState, jsonl, row, started } from './webview-harness/fixtures.ts';
import { clearSent, host, panelSession, SHOTS } from './webview-harness/session.ts';
import { patience } from './helpers/patience.ts';

// Callbacks handed to page.evaluate run in the page; typed loosely so the node type check needs no DOM library.
declare const window: any;
declare const document: any;
declare const Event: any;
declare const requestAnimationFrame: (callback: () => void) => number;

type Host = { __host: { sent: PanelMessage[]; violations: unknown[]; post(m: unknown): void } };
let session: ReturnType<typeof panelSession>;

async function panel(viewport: { width: number; height: number }): Promise<PanelPage> {
  const p = await session.open('dark', viewport);
  await host(p.page, { type: 'init', state: initState() });
  return p;
}

const setSelect = (page: Page, selector: string, value: string) =>
  page.locator(selector).evaluate((el, v) => {
    el.value = v;
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }, value);
const disabled = (page: Page, selector: string) => page.locator(selector).evaluate((b) => Boolean(b.disabled)) as Promise<boolean>;

/** The request the next click on Run sends. */
async function runRequest(page: Page): Promise<RunRequest> {
  await clearSent(page);
  await page.locator('#run').click();
  const handle = await page.waitForFunction(() => (window as Host).__host.sent.find((m) => m.type === 'request' && m.method === 'run') ?? null);
  const sent = (await handle.jsonValue()) as Extract<PanelMessage, { method: 'run' }>;
  return sent.params.request;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50))));
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

async function assertClean(p: PanelPage): Promise<void> {
  assert.deepEqual(await p.page.evaluate(() => (window as Host).__host.violations), [], 'no CSP violation');
  assert.deepEqual(p.problems, [], 'no console error or warning, no uncaught exception');
}

/** Model output that would run script if it were ever rendered as HTML. */
const HOSTILE = '<img src=x onerror="window.__pwned=1">';

const VOTE: Aggregate = { name: 'vote', winner: HOSTILE, confidence: 2 / 4, votes: 3, failed: 1, distribution: [{ answer: HOSTILE, votes: 2 }, { answer: 'no', votes: 1 }] };
const MERGE: Aggregate = { name: 'merge', items: [{ id: 1 }, 2], errors: [{ index: 2, endpoint: 'gpu03:8000', error: `Unexpected token '<', "${HOSTILE}" is not valid JSON` }] };
const STEPS: ReduceView = {
  text: HOSTILE,
  levels: [
    { level: 0, label: 'Stage 1 · draft (2 agents)', texts: ['[1, 2]', HOSTILE], aggregate: MERGE },
    { level: 1, label: 'Stage 2 · pick (3 agents)', texts: [HOSTILE, HOSTILE, 'no'], aggregate: VOTE },
  ],
};

describe('webview: the ported patterns in Chromium', { timeout: patience(120_000) }, () => {
  session = panelSession();

  it('Compose makes the request of a pipeline, a blackboard, a fan-out/fan-in and an aggregated broadcast, with a routing choice', async () => {
    const p = await panel({ width: 1280, height: 900 });
    const { page } = p;
    await page.locator('#pattern input[value="pipeline"]').click();
    await page.locator('#pipeline-input textarea').fill('a poem about GPUs');
    await page.locator('#add-stage').click();
    await page.locator('#stage-template-2 textarea').fill('Polish');
    await page.locator('#compose-problem', { hasText: 'Stage 3: its template needs {input}' }).waitFor();
    assert.equal(await disabled(page, '#run'), true, 'a stage without {input}: no run');
    await page.locator('#stage-template-2 textarea').fill('Polish: {input}');
    await page.locator('#stage-keep-2 input').fill('GPU');
    await setSelect(page, '#stage-transform-2', 'stats');
    await setSelect(page, '#route', 'kv-cache');
    await page.locator('#compose-problem').waitFor({ state: 'detached' });
    await shot(page, 'patterns-compose-pipeline-1280');
    assert.deepEqual(await runRequest(page), {
      pattern: 'pipeline', prompts: [], tags: [], batch: false, route: 'kv-cache',
      patterns: {
        input: 'a poem about GPUs',
        stages: [
          { name: 'draft', template: 'Draft an answer: {input}', agents: 2 },
          { name: 'pick', template: 'Pick the best of these drafts:\n{input}', agents: 3, transform: 'vote' },
          { name: 'stage 3', template: 'Polish: {input}', agents: 1, keep: 'GPU', transform: 'stats' },
        ],
      },
    } satisfies RunRequest);

    await page.locator('#pattern input[value="blackboard"]').click();
    await page.locator('[data-section="hypotheses"].warning', { hasText: 'hypotheses: 0 endpoints' }).waitFor();
    await page.locator('#sections textarea').fill('chat\nembed');
    await page.locator('[data-section="chat"].ok', { hasText: 'chat: 3 endpoints' }).waitFor();
    assert.equal(await page.locator('[data-section="embed"]').getAttribute('class'), 'warning', 'the one role=embed endpoint is down: nobody writes there');
    await page.locator('#max-rounds input').fill('4');
    await page.locator('#until input').fill('AGREED');
    await shot(page, 'patterns-compose-blackboard-1280');
    const board = await runRequest(page);
    assert.deepEqual(board.patterns, { sections: ['chat', 'embed'], boardPrompt: 'You write {section}. The board so far:\n{board}', maxRounds: 4, until: 'AGREED' });
    assert.equal(board.route, 'kv-cache', 'the routing choice holds across patterns');

    await page.locator('#pattern input[value="fan-out-fan-in"]').click();
    await page.locator('#fanout-prompt textarea').fill('Name a use of a swarm');
    await page.locator('#workers input').fill('2');
    const fan = await runRequest(page);
    assert.deepEqual([fan.pattern, fan.prompt, fan.patterns], ['fan-out-fan-in', 'Name a use of a swarm', { collectPrompt: 'Combine these answers into one:\n{responses}', workers: 2 }]);

    await page.locator('#pattern input[value="broadcast"]').click();
    await page.locator('#broadcast-prompt textarea').fill('Yes or no?');
    await setSelect(page, '#aggregate', 'top-k');
    await page.locator('#top-k input').fill('2');
    await setSelect(page, '#route', 'round-robin');
    const cast = await runRequest(page);
    assert.deepEqual([cast.prompt, cast.patterns, cast.route], ['Yes or no?', { aggregate: 'top-k', k: 2 }, undefined]);
    await assertClean(p);
  });

  for (const width of [1280, 400]) {
    it(`a pipeline's stages show as levels, its last stage's vote as its final answer, the merge errors, model output as text (${width} px)`, async () => {
      const p = await panel({ width, height: 900 });
      const { page } = p;
      const rows = [row(0), row(1), row(2, { text: HOSTILE }), row(3, { level: 1 }), row(4, { level: 1 })];
      await host(page, started('pl', 5, 'pipeline of 2 stages: draft → pick', { pattern: 'pipeline' }));
      await host(page, { type: 'runProgress', runId: 'pl', done: 5, ok: 5, failed: 0, total: 5, elapsedMs: 900, resultsJsonl: jsonl(rows.map((r) => ({ ...r, prompt: `prompt ${r.index}` }))) });
      await host(page, finished('pl', { pattern: 'pipeline', reduce: STEPS }));
      await page.locator('#tree').waitFor();
      assert.equal(await page.locator('#tree-final').textContent(), HOSTILE);
      assert.equal((await page.locator('vscode-tab-header[data-tab="tree"]').textContent())!.trim(), 'Pipeline', 'the tab is named for the pattern');
      assert.deepEqual(await page.locator('#tree section.level').evaluateAll((s) => s.map((x) => (x as { dataset: { level: string } }).dataset.level)), ['0', '1'], 'stages in the order they ran');
      assert.match((await page.locator('section.level[data-level="1"] h3').textContent()) ?? '', /Stage 2 · pick \(3 agents\)\s+3 answers/);
      // The last stage's vote is the pipeline's answer: drawn as a table at the final answer, not in its stage again.
      const vote = page.locator('section.final .aggregate[data-aggregate="vote"]');
      assert.equal(await page.locator('section.level[data-level="1"] .aggregate').count(), 0);
      assert.equal(await vote.locator('.vote-winner').textContent(), HOSTILE);
      assert.equal(await vote.locator('.vote-confidence').textContent(), '50.0%');
      assert.equal(await vote.locator('.vote-votes').textContent(), '3 of 4 (1 failed)');
      assert.deepEqual(await vote.locator('.vote-distribution tbody tr td:first-child').allTextContents(), [HOSTILE, 'no']);
      const merge = page.locator('section.level[data-level="0"] .aggregate[data-aggregate="merge"]');
      assert.equal(await merge.locator('.merge-items').textContent(), '2');
      assert.deepEqual(await merge.locator('.aggregate-errors tbody td').allTextContents(), ['2', 'gpu03:8000', `Unexpected token '<', "${HOSTILE}" is not valid JSON`]);
      assert.equal(await page.evaluate(() => document.querySelectorAll('img').length + (window.__pwned ? 100 : 0)), 0, 'no model output became an element');
      await shot(page, `patterns-steps-${width}`);
      if (width === 400) {
        await page.locator('vscode-tab-header[data-tab="compose"]').click();
        await page.locator('#pattern input[value="pipeline"]').click();
        await page.locator('#stages').waitFor();
        await shot(page, 'patterns-compose-pipeline-400');
      }
      await assertClean(p);
    });
  }

  it('statistics show each answer that was not a number', async () => {
    const p = await panel({ width: 1280, height: 700 });
    const { page } = p;
    const stats: Aggregate = { name: 'stats', count: 2, mean: 4.5, std: 0.7071067811865476, median: 4.5, min: 4, max: 5, errors: [{ index: 1, endpoint: 'gpu02:8000', error: 'not a number: "five"' }] };
    await host(page, started('b', 3, 'broadcast → stats: How many?', { pattern: 'broadcast' }));
    await host(page, finished('b', { pattern: 'broadcast', reduce: { text: JSON.stringify(stats), levels: [{ level: 0, label: 'Answers · stats', texts: ['4', 'five', '5'], aggregate: stats }] } }));
    const shown = page.locator('.aggregate[data-aggregate="stats"]');
    await shown.waitFor();
    assert.deepEqual(await shown.locator('dd[data-stat]').allTextContents(), ['2', '4.500', '0.7071', '4.500', '4', '5']);
    assert.deepEqual(await shown.locator('.aggregate-errors tbody td').allTextContents(), ['1', 'gpu02:8000', 'not a number: "five"']);
    await assertClean(p);
  });

  it('a broadcast\'s vote is its final answer drawn as a table (winner, votes, share), with the answers that were missing; the tab is named Broadcast', async () => {
    const p = await panel({ width: 1100, height: 800 });
    const { page } = p;
    const vote: Aggregate = { name: 'vote', winner: 'yes', confidence: 2 / 3, votes: 3, failed: 0, distribution: [{ answer: 'yes', votes: 2 }, { answer: 'no', votes: 1 }] };
    await host(page, started('v', 4, 'broadcast → vote: Yes or no?', { pattern: 'broadcast' }));
    await host(page, finished('v', {
      pattern: 'broadcast',
      reduce: {
        text: JSON.stringify(vote),
        levels: [{ level: 0, label: 'Answers · vote', texts: ['yes', 'yes', 'no'], names: ['gpu01:8000', 'gpu02:8000', 'gpu03:8000'], aggregate: vote }],
        missing: [{ level: 0, name: 'gpu04:8000', reason: 'connection refused' }],
      },
    }));
    const final = page.locator('#tree .final .aggregate[data-aggregate="vote"]');
    await final.waitFor();
    assert.equal(await final.locator('.vote-winner').textContent(), 'yes');
    assert.deepEqual(await final.locator('.vote-distribution tbody tr').evaluateAll((trs) => trs.map((tr) => tr.textContent.replace(/\s+/g, ' ').trim())), ['yes 2 66.7%', 'no 1 33.3%']);
    assert.equal(await page.locator('#tree-final').isVisible(), false, 'the JSON is there as text only on request');
    assert.match((await page.locator('#tree-missing li').textContent())!.replace(/\s+/g, ' '), /gpu04:8000: connection refused/);
    assert.deepEqual(await page.locator('section.level[data-level="0"] .node-id').allTextContents(), ['gpu01:8000', 'gpu02:8000', 'gpu03:8000'], 'answers named by endpoint');
    assert.equal(await page.locator('.aggregate[data-aggregate="vote"]').count(), 1, 'drawn once');
    assert.equal((await page.locator('vscode-tab-header[data-tab="tree"]').textContent())!.trim(), 'Broadcast');
    await page.screenshot({ path: join(SHOTS, 'patterns-broadcast-vote.png') });
    await assertClean(p);
  });
});

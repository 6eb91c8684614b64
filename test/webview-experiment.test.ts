/**
 * The experiment view (webview/experiment/) in real headless Chromium, on the harness page under the
 * extension's CSP: the host sends the whole view at every server reading (about one a second), and
 * the view patches itself — the run picker, the chart and the runs table stay the same elements, so an
 * open picker stays open, focus and scroll stay, and a reading at 1,000 endpoints touches a text and
 * the chart's data, not the page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { ExperimentRun, ExperimentView, ServerLoad } from '../src/panel/experiment-protocol.ts';
import { launchBrowser, type Browser } from './webview-harness/browser.ts';
import { startHarness, type Harness } from './webview-harness/server.ts';
import { until } from './helpers/patience.ts';

// Page callbacks run in the browser.
declare const window: any;
declare const document: any;
declare const MutationObserver: any;

/** A reading of 1,000 servers through a sample of 128, `i` seconds in. */
function reading(i: number): ServerLoad {
  return {
    answered: 128,
    asked: 128,
    endpoints: 1_000,
    running: 3_000 + 10 * i,
    waiting: Math.max(0, 1_000 - 20 * i),
    finished: 100 * i,
    generationTokens: 3_000 * i,
    preemptions: i,
    prefixCacheQueries: 0,
    prefixCacheHits: 0,
    runningBand: { median: 3, p90: 4, max: 4 },
    waitingBand: { median: 1, p90: 2, max: 3 },
    kvCacheUsage: { median: 0.4 + i / 200, p90: 0.7, max: 0.9 },
    atMs: 1_000 * i,
  };
}

function finishedRun(name: string, readings: number): ExperimentRun {
  return {
    name,
    point: { value: null, arm: 'batched', repetition: 1 },
    summary: { wallMs: 12_345, prompts: 16_000, ok: 16_000, failed: 0, promptThroughput: 1_296, outputTokenThroughput: 38_880, ttftMedianMs: null },
    client: { cpuMs: 900, requests: 1_000, cpuPerRequestMs: 0.9, eventLoopBusy: 0.2, clientBound: false },
    servers: Array.from({ length: readings }, (_, i) => reading(i + 1)),
  };
}

/** The view while `live`'s n-th reading is in: one run finished before it. */
function running(n: number): ExperimentView {
  return {
    file: '/work/exp/fleet.swarm.yaml',
    folder: '/work/exp/fleet.runs/r1',
    status: 'running',
    error: null,
    exitCode: null,
    runs: [finishedRun('batched-1', 30)],
    live: { name: 'batched-2', servers: Array.from({ length: n }, (_, i) => reading(i + 1)) },
    sweep: null,
  };
}

describe('the experiment view, patched at every reading (headless Chromium)', () => {
  let harness: Harness;
  let browser: Browser;
  before(async () => {
    harness = await startHarness();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await harness?.close();
  });

  const post = (page: Page, view: ExperimentView) => page.evaluate((v: ExperimentView) => window.__host.post({ type: 'experiment', view: v }), view);
  const caption = (page: Page) => page.locator('#exp-servers .chart-box .muted').textContent();

  test('a focused run picker keeps its focus, element and choice across readings; the page keeps its scroll; a reading adds no elements', async () => {
    // 400 px wide: the panel beside an editor; short, so the page scrolls.
    const { page, problems } = await browser.open(harness.experimentUrl('dark'), { width: 400, height: 300 });
    await page.waitForFunction(() => window.__host.sent.some((m: { type: string }) => m.type === 'ready'));
    await post(page, running(1));
    await until(() => caption(page), 'the first reading drawn', 15_000, { ready: (t) => /^1,000 endpoints, 1 readings so far/.test(t ?? '') });
    assert.equal(await page.locator('#exp-servers-chart canvas').count(), 1, 'the servers chart drawn');
    assert.deepEqual(await page.locator('#exp-servers-run option').allTextContents(), ['batched-1', 'batched-2 (running)']);

    // Marks on the elements a rebuild would replace; the picker focused; the page scrolled.
    await page.evaluate(() => {
      for (const s of ['#exp-servers-run', '#exp-servers-chart', '#exp-servers-chart canvas', '#exp-runs table']) document.querySelector(s).__kept = true;
    });
    await page.focus('#exp-servers-run');
    await page.locator('#exp-runs').scrollIntoViewIfNeeded();
    const scrolled = await page.evaluate(() => window.scrollY);
    assert.ok(scrolled > 0, 'the page scrolls at 400 × 300');
    // Every element added to or taken from the page from here on.
    await page.evaluate(() => {
      window.__added = 0;
      window.__removed = 0;
      new MutationObserver((records: any[]) => {
        for (const r of records) {
          for (const n of r.addedNodes) if (n.nodeType === 1) window.__added++;
          for (const n of r.removedNodes) if (n.nodeType === 1) window.__removed++;
        }
      }).observe(document.body, { childList: true, subtree: true });
    });

    const READINGS = 60;
    for (let n = 2; n <= READINGS; n++) await post(page, running(n));
    await until(() => caption(page), `reading ${READINGS} drawn`, 30_000, { ready: (t) => new RegExp(`^1,000 endpoints, ${READINGS} readings so far`).test(t ?? '') });
    const after = await page.evaluate(() => ({
      focused: document.activeElement?.id ?? null,
      kept: ['#exp-servers-run', '#exp-servers-chart', '#exp-servers-chart canvas', '#exp-runs table'].filter((s: string) => document.querySelector(s)?.__kept === true),
      picked: document.querySelector('#exp-servers-run').selectedOptions[0].textContent,
      scrollY: window.scrollY,
      added: window.__added,
      removed: window.__removed,
    }));
    assert.equal(after.focused, 'exp-servers-run', 'the picker keeps the focus');
    assert.deepEqual(after.kept, ['#exp-servers-run', '#exp-servers-chart', '#exp-servers-chart canvas', '#exp-runs table'], 'the same elements, not rebuilt ones');
    assert.equal(after.picked, 'batched-2 (running)');
    assert.equal(after.scrollY, scrolled, 'the page keeps its scroll');
    // A rebuild adds every element of the page at each reading (hundreds); a patch sets a text and the chart's data.
    assert.deepEqual([after.added, after.removed], [0, 0], `elements added, removed over ${READINGS - 1} readings`);
    assert.deepEqual(problems, []);
  });

  test('a run picked stays picked while readings of another come and runs end; a finished run appends its row; the sweep arrives at the end', async () => {
    const { page, problems } = await browser.open(harness.experimentUrl('light'), { width: 800, height: 900 });
    await page.waitForFunction(() => window.__host.sent.some((m: { type: string }) => m.type === 'ready'));
    await post(page, running(5));
    await until(() => caption(page), 'reading 5 drawn', 15_000, { ready: (t) => /5 readings so far/.test(t ?? '') });
    await page.locator('#exp-servers-run').selectOption('batched-1');
    await until(() => caption(page), 'the run picked drawn', 15_000, { ready: (t) => /^1,000 endpoints, 30 readings: /.test(t ?? '') });
    assert.match((await page.locator('#exp-client').textContent()) ?? '', /prompts16,000 ok · 0 failed/);
    await page.evaluate(() => void (document.querySelector('#exp-runs table').__kept = true));
    for (let n = 6; n <= 10; n++) await post(page, running(n));
    // Then the live run ends and a third starts: the picker's options change, the run picked stays.
    const second = { ...finishedRun('batched-2', 10), point: { value: null, arm: 'batched', repetition: 2 } };
    await post(page, { ...running(1), runs: [finishedRun('batched-1', 30), second], live: { name: 'batched-3', servers: [reading(1)] } });
    await until(() => page.locator('#exp-status').textContent(), 'the second run in', 15_000, { ready: (t) => t === 'running · 2 runs done' });
    assert.deepEqual(await page.locator('#exp-servers-run option').allTextContents(), ['batched-1', 'batched-2', 'batched-3 (running)']);
    assert.equal(await page.locator('#exp-servers-run').inputValue(), 'batched-1');
    assert.match((await caption(page)) ?? '', /^1,000 endpoints, 30 readings: /);
    // The experiment ends: the sweep comes, the runs table is the same one with its rows appended.
    const done: ExperimentView = {
      ...running(10),
      status: 'finished',
      live: null,
      runs: [finishedRun('batched-1', 30), second],
      sweep: {
        parameter: 'concurrency',
        metric: 'wall_s',
        rows: [{ value: 0, arm: 'batched', runs: 2, metrics: { wall_s: { median: 12.3, q1: 12.3, q3: 12.4, min: 12.3, max: 12.4, n: 2 } } } as never],
        plan: { fittedOn: null, rows: [], note: 'no streamed run to fit the planner on' },
      },
    };
    await post(page, done);
    await until(() => page.locator('#exp-status').textContent(), 'the experiment finished', 15_000, { ready: (t) => t === 'finished · 2 runs' });
    assert.deepEqual(await page.locator('#exp-runs tbody tr td:first-child').allTextContents(), ['batched #1', 'batched #2']);
    assert.equal(await page.evaluate(() => document.querySelector('#exp-runs table').__kept), true, 'the runs table kept, its row appended');
    assert.equal(await page.locator('#exp-stop').isHidden(), true, 'no Stop once finished');
    assert.equal(await page.locator('#exp-sweep table.data tbody tr').count(), 1);
    assert.deepEqual(await page.locator('#exp-servers-run option').allTextContents(), ['batched-1', 'batched-2']);
    assert.deepEqual(problems, []);
  });
});

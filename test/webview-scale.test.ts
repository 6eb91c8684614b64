/**
 * The panel at scale, in headless Chromium on the harness page: a batched run of 10,000 prompts over
 * 1,000 endpoints as the host states it (runStarted, throttled runProgress, runFinished with a
 * 1,000-endpoint summary), then the work a person does next (Results, its endpoint filter, the other
 * tabs). The longest gap between the webview's animation frames, measured inside the page, stays
 * under 250 ms throughout.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { host, panelSession } from './webview-harness/session.ts';
import { finished, initState, started, summary } from './webview-harness/fixtures.ts';
import { patience } from './helpers/patience.ts';

declare const window: any;
declare const document: any;
declare const Event: any;
declare const requestAnimationFrame: (callback: () => void) => number;

const PROMPTS = 10_000;
const ENDPOINTS = 1_000;
/** The longest frame the panel may take (issue 21). */
const FRAME_BUDGET_MS = 250;
/**
 * The scenario runs this many times, each phase judged by its best run: another process on a
 * shared machine only lengthens a frame, so the shortest of the longest frames is the panel's own.
 */
const RUNS = 3;

const endpointName = (i: number) => `x${4000 + Math.floor(i / 4)}c${i % 4}s0b0n0:${6739 + (i % 2)}`;

const startGaps = (page: Page) => page.evaluate(() => window.__host.frameGaps.start());
const stopGaps = (page: Page) => page.evaluate(() => window.__host.frameGaps.stop()) as Promise<number>;
const painted = (page: Page) => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));

describe('webview at scale: 10,000 prompts over 1,000 endpoints', { timeout: patience(240_000) }, () => {
  const session = panelSession();

  it(`never takes a frame longer than ${FRAME_BUDGET_MS} ms: the run streaming in, its end, Results and its endpoint filter, every tab`, async (t) => {
    const endpoints = Array.from({ length: ENDPOINTS }, (_, i) => ({ id: endpointName(i), status: 'up' as const, model: 'llama-3.1-8b', tags: { role: 'chat' } }));
    const gaps: Record<string, number[]> = {};
    for (let rep = 0; rep < RUNS; rep++) {
      // A fresh panel each time: every run is the first one it sees (nothing drawn or known before).
      const { page, problems } = await session.open('dark', { width: 1400, height: 900 });
      await host(page, { type: 'init', state: initState({ endpoints }) });
      const runId = `big-${rep}`;
      const measure = async (what: string, act: () => Promise<unknown>) => {
        await painted(page);
        await startGaps(page);
        await act();
        await painted(page);
        (gaps[what] ??= []).push(Math.round(await stopGaps(page)));
      };
      const context = { hostfile: '/work/aurora.hostfile', endpoints: ENDPOINTS, model: 'llama-3.1-8b', params: { batch: true, stream: true, tags: [] } };
      // The messages are made in the page and posted there, as VS Code delivers them: no test-driver
      // serialization inside the measured frames (what they need is handed to the page before).
      await page.evaluate(
        ({ n, names, start }) => {
          window.__staged = { names, start: { ...start, prompts: Array.from({ length: n }, (_, i) => `prompt ${i}: tell me something`) } };
        },
        { n: PROMPTS, names: Array.from({ length: ENDPOINTS }, (_, i) => endpointName(i)), start: started(runId, PROMPTS, '10,000 prompts · batched', { context }) },
      );
      await measure('run streaming in (10 progress messages of 1,000 rows)', async () => {
        await page.evaluate(
          async ({ runId, n }) => {
            const { start, names } = window.__staged;
            window.postMessage(start, '*');
            for (let k = 0; k < n / 1000; k++) {
              const done = (k + 1) * 1000;
              const results = window.__host.makeRows(1000, { from: k * 1000, endpoints: names, failEvery: 97 });
              window.postMessage({ type: 'runProgress', runId, done, ok: done, failed: 0, total: n, elapsedMs: 200 * (k + 1), results }, '*');
              await new Promise((r) => setTimeout(r, 200)); // the host's pace: five messages a second
            }
          },
          { runId, n: PROMPTS },
        );
        await page.locator('#progress-done', { hasText: '10,000' }).waitFor();
      });
      const eps = Array.from({ length: ENDPOINTS }, (_, i) => ({ endpoint: endpointName(i), prompts: 10, ok: 10, failed: 0, requests: 1 }));
      await page.evaluate((m) => void (window.__staged = m), finished(runId, { label: '10,000 prompts · batched', context, summary: summary({ prompts: PROMPTS, ok: PROMPTS - 104, failed: 104, httpRequests: 1002, generationRequests: 1000, endpoints: eps }) }));
      await measure('run finished (a 1,000-endpoint summary)', async () => {
        await page.evaluate(() => window.postMessage(window.__staged, '*'));
        await page.locator('#run-status[data-state="done"]').waitFor();
      });
      await measure('Results tab', async () => {
        await page.locator('vscode-tab-header[data-tab="results"]').click();
        await page.locator('#results-table').waitFor({ state: 'visible' });
      });
      await measure('endpoint filter: pick one of 1,000', async () => {
        await page.locator('#filter-endpoint input, #filter-endpoint').first().click();
        await page.locator('#filter-endpoint').evaluate((el: any, v: string) => {
          el.value = v;
          el.dispatchEvent(new Event('change', { bubbles: true }));
        }, endpointName(7));
        await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '10');
      });
      for (const tab of ['compose', 'history', 'compare', 'tree', 'results']) {
        await measure(`${tab} tab`, async () => {
          await page.locator(`vscode-tab-header[data-tab="${tab}"]`).click();
          await page.locator(`vscode-tab-panel[data-panel="${tab}"]`).waitFor({ state: 'visible' });
        });
      }
      assert.deepEqual(problems, []);
      await page.close();
    }
    for (const [what, ms] of Object.entries(gaps)) t.diagnostic(`longest frame, ${what}: ${ms.join(' / ')} ms (best ${Math.min(...ms)})`);
    const best = Object.entries(gaps).map(([what, ms]) => [what, Math.min(...ms)] as const);
    const worst = Math.max(...best.map(([, ms]) => ms));
    assert.ok(worst <= FRAME_BUDGET_MS, `longest frame ${worst} ms: ${JSON.stringify(gaps)}`);
  });
});

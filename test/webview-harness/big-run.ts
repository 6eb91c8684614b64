/**
 * The panel at 10,000 prompts over 1,000 endpoints, as a person sees it (issue 21): a batched run
 * streaming in (runStarted with its prompts, ten runProgress of 1,000 rows at the host's pace), its
 * end (a 1,000-endpoint summary), Results, its endpoint filter, then every tab. Each phase goes
 * through `phase`, which the caller wraps (frame gaps measured, or a trace taken). The host's
 * messages are made in the page and posted there, as VS Code delivers them: no test-driver
 * serialization inside a phase (what they need is handed to the page before it).
 */
import type { Page } from 'playwright-core';
import { finished, initState, started, summary } from './fixtures.ts';

declare const window: any;
declare const document: any;
declare const Event: any;

export const PROMPTS = 10_000;
export const ENDPOINTS = 1_000;
/** Aurora-style host names, two ports a node: names that differ only late, as the cluster's do. */
export const endpointName = (i: number) => `x${4000 + Math.floor(i / 4)}c${i % 4}s0b0n0:${6739 + (i % 2)}`;

export type Phase = (what: string, act: () => Promise<unknown>) => Promise<void>;

export async function bigRun(page: Page, runId: string, phase: Phase): Promise<void> {
  const endpoints = Array.from({ length: ENDPOINTS }, (_, i) => ({ id: endpointName(i), status: 'up' as const, model: 'llama-3.1-8b', tags: { role: 'chat' } }));
  await page.evaluate((m) => window.__host.post(m), { type: 'init', state: initState({ endpoints }) });
  const context = { hostfile: '/work/aurora.hostfile', endpoints: ENDPOINTS, model: 'llama-3.1-8b', params: { batch: true, stream: true, tags: [] } };
  await page.evaluate(
    ({ n, names, start }) => {
      window.__staged = { names, start: { ...start, prompts: Array.from({ length: n }, (_, i) => `prompt ${i}: tell me something`) } };
    },
    { n: PROMPTS, names: endpoints.map((e) => e.id), start: started(runId, PROMPTS, '10,000 prompts · batched', { context }) },
  );
  await phase('run streaming in (10 progress messages of 1,000 rows)', async () => {
    await page.evaluate(
      async ({ runId, n }) => {
        const { start, names } = window.__staged;
        window.postMessage(start, '*');
        for (let k = 0; k < n / 1000; k++) {
          const done = (k + 1) * 1000;
          const resultsJsonl = window.__host.jsonl(window.__host.makeRows(1000, { from: k * 1000, endpoints: names, failEvery: 97 }));
          window.postMessage({ type: 'runProgress', runId, done, ok: done, failed: 0, total: n, elapsedMs: 200 * (k + 1), resultsJsonl }, '*');
          await new Promise((r) => setTimeout(r, 200)); // the host's pace: five messages a second
        }
      },
      { runId, n: PROMPTS },
    );
    await page.locator('#progress-done', { hasText: '10,000' }).waitFor();
  });
  const eps = endpoints.map((e) => ({ endpoint: e.id, prompts: 10, ok: 10, failed: 0, requests: 1 }));
  await page.evaluate((m) => void (window.__staged = m), finished(runId, { label: '10,000 prompts · batched', context, summary: summary({ prompts: PROMPTS, ok: PROMPTS - 104, failed: 104, httpRequests: 1002, generationRequests: 1000, endpoints: eps }) }));
  await phase('run finished (a 1,000-endpoint summary)', async () => {
    await page.evaluate(() => window.postMessage(window.__staged, '*'));
    await page.locator('#run-status[data-state="done"]').waitFor();
  });
  await phase('Results tab', async () => {
    await page.locator('vscode-tab-header[data-tab="results"]').click();
    await page.locator('#results-table').waitFor({ state: 'visible' });
  });
  await phase('endpoint filter: pick one of 1,000', async () => {
    await page.locator('#filter-endpoint').click();
    await page.locator('#filter-endpoint').evaluate((el: any, v: string) => {
      el.value = v;
      el.dispatchEvent(new Event('change', { bubbles: true }));
    }, endpointName(7));
    await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '10');
  });
  for (const tab of ['compose', 'history', 'compare', 'tree', 'results']) {
    await phase(`${tab} tab`, async () => {
      await page.locator(`vscode-tab-header[data-tab="${tab}"]`).click();
      await page.locator(`vscode-tab-panel[data-panel="${tab}"]`).waitFor({ state: 'visible' });
    });
  }
}

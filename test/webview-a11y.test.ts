/**
 * The panel in every theme and to a screen reader, in headless Chromium on the harness page (VS
 * Code's own theme variables for Light Modern, Dark Modern and both High Contrast themes):
 * - the contrast of each status colour, computed from the rendered styles (colour over the
 *   background it is painted on), is at least 4.5:1;
 * - the accessibility tree (Chromium's, through the DevTools protocol) names every control, shows
 *   the pattern choice as radios, and has the results table as a grid with its header row inside.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { host, panelSession, SHOTS } from './webview-harness/session.ts';
import { comparison, comparisonStarted, finished, initState, jsonl, row, started, summary } from './webview-harness/fixtures.ts';
import { ENDPOINTS } from './webview-harness/fixtures.ts';
import type { Theme } from './webview-harness/server.ts';
import { join } from 'node:path';
import { patience } from './helpers/patience.ts';
import { contrastOf, STATUS_TEXT } from './webview-harness/contrast.ts';


const THEMES: Array<[Theme, string]> = [
  ['light', 'Light Modern'],
  ['dark', 'Dark Modern'],
  ['hc', 'Dark High Contrast'],
  ['hc-light', 'Light High Contrast'],
];

/** A finished run with ok, failed and cancelled rows, one endpoint down, and a comparison with a better value. */
async function showStatuses(page: Page): Promise<void> {
  await host(page, { type: 'init', state: initState() });
  await host(page, started('r1', 6, 'statuses · 6 prompts'));
  const rows = [row(0), row(1, { status: 'failed', ok: false, text: '', error: 'HTTP 500: overloaded' }), row(2), row(3, { status: 'cancelled', ok: false, text: '', endpoint: null })];
  await host(page, { type: 'runProgress', runId: 'r1', done: 4, ok: 2, failed: 1, total: 6, elapsedMs: 500, resultsJsonl: jsonl(rows) });
  await host(page, finished('r1', { label: 'statuses · 6 prompts', cancelled: true, summary: summary({ prompts: 6, ok: 2, failed: 1, cancelled: 3 }) }));
  await page.locator('#run-status[data-state="cancelled"]').waitFor();
}

async function showComparison(page: Page): Promise<void> {
  const c = comparison(2, 6);
  for (const r of c.rounds) if (r.arm === 'individual') Object.assign(r.summary, { ok: 5, failed: 1 });
  await host(page, comparisonStarted('c1', 6, 'compare', 2));
  await host(page, finished('c1', { label: 'compare', mode: 'compare', comparison: c, rows: { arm: { arm: 'batched', round: 0 }, resultsJsonl: jsonl([row(0), row(1)]) } }));
  await page.locator('vscode-tab-header[data-tab="compare"]').click();
  await page.locator('#compare-figures td.best').first().waitFor();
}

describe('webview in every theme and to a screen reader', { timeout: patience(240_000) }, () => {
  const session = panelSession();

  it('every status colour keeps 4.5:1 against its background in Light Modern, Dark Modern and both High Contrast themes', async (t) => {
    const failures: string[] = [];
    for (const [theme, name] of THEMES) {
      const { page, problems } = await session.open(theme, { width: 1280, height: 900 });
      await showStatuses(page);
      await page.locator('vscode-tab-header[data-tab="results"]').click();
      await page.locator('#results-table .s-failed').first().waitFor();
      const measured: Record<string, Awaited<ReturnType<typeof contrastOf>>> = {};
      for (const [what, sel] of Object.entries(STATUS_TEXT)) if (!what.includes('comparison')) measured[what] = await contrastOf(page, sel);
      await page.screenshot({ path: join(SHOTS, `contrast-results-${theme}.png`) });
      await showComparison(page);
      for (const [what, sel] of Object.entries(STATUS_TEXT)) if (what.includes('comparison')) measured[what] = await contrastOf(page, sel);
      await page.screenshot({ path: join(SHOTS, `contrast-compare-${theme}.png`) });
      for (const [what, m] of Object.entries(measured)) {
        assert.ok(m, `${name}: ${what} (${STATUS_TEXT[what]}) is on show`);
        t.diagnostic(`${name}: ${what} ${m.fg} on ${m.bg} = ${m.ratio.toFixed(2)}:1`);
        if (m.ratio < 4.5) failures.push(`${name}: ${what} ${m.fg} on ${m.bg} = ${m.ratio.toFixed(2)}:1`);
      }
      assert.deepEqual(problems, []);
      await page.close();
    }
    assert.deepEqual(failures, [], 'text under 4.5:1');
  });

  it('the accessibility tree: every control named, the patterns radios in a named group, the results a grid with its header row inside', async () => {
    const { page } = await session.open('dark', { width: 1280, height: 900 });
    await host(page, { type: 'init', state: initState({ endpoints: ENDPOINTS }) });
    await page.locator('#compose').waitFor();
    const cdp = await page.context().newCDPSession(page);
    type AXNode = { nodeId: string; ignored: boolean; role?: { value: string }; name?: { value: string }; childIds?: string[]; parentId?: string; properties?: Array<{ name: string; value: { value: unknown } }> };
    let all: AXNode[] = [];
    const tree = async () => {
      all = ((await cdp.send('Accessibility.getFullAXTree')) as unknown as { nodes: AXNode[] }).nodes;
      return all.filter((n) => !n.ignored);
    };
    const CONTROLS = new Set(['button', 'checkbox', 'combobox', 'textbox', 'searchbox', 'spinbutton', 'radio', 'slider', 'listbox', 'link', 'tab', 'switch', 'menuitem']);
    const unnamed = (nodes: AXNode[]) => nodes.filter((n) => CONTROLS.has(n.role?.value ?? '') && !(n.name?.value ?? '').trim()).map((n) => n.role!.value);

    // Compose: the pattern choice is radios in a group called Pattern; no control without a name.
    let nodes = await tree();
    const radios = nodes.filter((n) => n.role?.value === 'radio');
    assert.deepEqual(radios.map((n) => n.name?.value), ['Scatter-gather', 'Map-gather', 'Broadcast', 'Tree-reduce', 'Fan-out / fan-in', 'Pipeline', 'Blackboard']);
    const byId = new Map(all.map((n) => [n.nodeId, n]));
    const group = (n: AXNode): AXNode | undefined => {
      for (let p = n.parentId ? byId.get(n.parentId) : undefined; p; p = p.parentId ? byId.get(p.parentId) : undefined) if (['group', 'radiogroup'].includes(p.role?.value ?? '')) return p;
      return undefined;
    };
    assert.match(group(radios[0]!)?.name?.value ?? '', /^pattern$/i, 'the radios are in a group named Pattern');
    assert.equal(nodes.filter((n) => n.role?.value === 'checkbox' && /Scatter-gather|Pipeline/.test(n.name?.value ?? '')).length, 0, 'no pattern is announced as a checkbox');
    assert.deepEqual(unnamed(nodes), [], 'Compose: every control has a name');

    // Results: named filters, and a grid whose first row is its header.
    await showStatuses(page);
    await page.locator('vscode-tab-header[data-tab="results"]').click();
    await page.locator('#results-table .s-ok').first().waitFor();
    nodes = await tree();
    assert.deepEqual(unnamed(nodes), [], 'Results: every control has a name');
    const named = (role: string) => nodes.filter((n) => n.role?.value === role).map((n) => n.name?.value);
    assert.ok(named('combobox').includes('Show'), `the Show filter: ${named('combobox')}`);
    assert.ok(named('combobox').some((x) => /^Endpoint/.test(x ?? '')), 'the endpoint filter');
    const grid = nodes.find((n) => n.role?.value === 'grid')!;
    assert.match(grid.name?.value ?? '', /Responses in input order/);
    const gridById = new Map(all.map((n) => [n.nodeId, n]));
    const rowsOf = (n: AXNode): AXNode[] => (n.childIds ?? []).flatMap((id) => {
      const c = gridById.get(id);
      return !c ? [] : c.role?.value === 'row' && !c.ignored ? [c] : rowsOf(c);
    });
    const gridRows = rowsOf(grid);
    const cellsOf = (n: AXNode, role: string): AXNode[] => (n.childIds ?? []).flatMap((id) => {
      const c = gridById.get(id);
      return !c ? [] : c.role?.value === role && !c.ignored ? [c] : c.role?.value === 'row' ? [] : cellsOf(c, role);
    });
    const headerCells = gridRows[0] ? cellsOf(gridRows[0], 'columnheader') : [];
    // TTFT and TPOT show for streamed runs only.
    assert.deepEqual(headerCells.map((c) => c!.name?.value), ['#', 'Prompt', 'Response', 'Endpoint', 'Status', 'Latency', 'Tokens'], "the header row is the grid's first row");
    assert.ok(gridRows.length > 4 && gridRows.slice(1).every((r) => cellsOf(r, 'gridcell').length >= 7), `data rows follow (${gridRows.length - 1})`);
    await page.screenshot({ path: join(SHOTS, 'a11y-results.png') });
  });
});

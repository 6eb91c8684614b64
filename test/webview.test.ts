/**
 * The experiment panel's front end (webview/) in real headless Chromium, on a harness page that
 * serves the built dist/webview bundle under the host's CSP and plays the host's side of the
 * protocol (test/webview-harness). Plus the panel's pure parts in node, its type check, and a scan
 * of its source for HTML sinks.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type { Page } from 'playwright-core';
import type { PanelMessage, RequestMethod, ResultRow, RunRequest } from '../src/panel/protocol.ts';
import { buildRunRequest, defaultCompose, summarize } from '../webview/lib/compose.ts';
import { parsePromptFile, rowsFromTable } from '../webview/lib/import.ts';
import { ResultsStore, noFilter } from '../webview/lib/results.ts';
import { requestSentText } from '../webview/lib/request-sent.ts';
import { figureRows, histogram, timelineLanes, endpointRows } from '../webview/lib/stats.ts';
import type { PanelPage } from './webview-harness/browser.ts';
import { clearSent, host, panelSession, SHOTS } from './webview-harness/session.ts';
import { comparison, comparisonStarted, CONTEXT, ENDPOINTS, finished, HISTORY, initState, jsonl, record, row, started, summary } from './webview-harness/fixtures.ts';
import { ROOT, type Theme } from './webview-harness/server.ts';
import { patience, until } from './helpers/patience.ts';

// The callbacks handed to page.evaluate run in the page, with its globals; they are typed loosely
// here so that the project's type check (node only, no DOM library) stays as it is.
declare const window: any;
declare const document: any;
declare const requestAnimationFrame: (callback: () => void) => number;
declare const MutationObserver: any;
declare const getComputedStyle: (element: unknown) => { display: string; outlineStyle: string };
declare const Event: any;
type HTMLElement = any;
type Element = any;
type Document = any;
type ShadowRoot = any;


// ---- the panel's pure parts, in node ---------------------------------------------------------

describe('webview: pure parts', () => {
  it('imports JSONL (prompt + input), TXT lines and CSV through a column choice', () => {
    const jsonl = parsePromptFile('set.prompts.jsonl', '{"prompt":"a","id":1}\n\n{"prompt":"b"}\n');
    assert.equal(jsonl.kind, 'rows');
    assert.deepEqual(jsonl.kind === 'rows' && jsonl.rows, [{ prompt: 'a', input: { id: 1 } }, { prompt: 'b', input: {} }]);
    const txt = parsePromptFile('q.txt', 'one\r\n\r\ntwo\n');
    assert.deepEqual(txt.kind === 'rows' && txt.rows, [{ prompt: 'one' }, { prompt: 'two' }]);
    const csv = parsePromptFile('q.csv', 'id,question,topic\n1,"What is, a CSV?",fmt\n2,"multi\nline",misc\n3,,empty\n');
    assert.equal(csv.kind, 'table');
    if (csv.kind !== 'table') return;
    assert.deepEqual(csv.columns, ['id', 'question', 'topic']);
    assert.equal(csv.suggested, 'question');
    const { rows, skipped } = rowsFromTable(csv.records, 'question');
    assert.deepEqual(rows, [
      { prompt: 'What is, a CSV?', input: { id: '1', topic: 'fmt' } },
      { prompt: 'multi\nline', input: { id: '2', topic: 'misc' } },
    ]);
    assert.equal(skipped, 1);
    const noPromptField = parsePromptFile('x.jsonl', '{"q":"a","n":1}\n{"q":"b","n":2}\n');
    assert.equal(noPromptField.kind, 'table');
    assert.equal(noPromptField.kind === 'table' && noPromptField.suggested, 'q');
    const bad = parsePromptFile('x.jsonl', '{"prompt":"a"}\nnot json\n');
    assert.match(bad.warnings[0]!, /x\.jsonl:2: not valid JSON/);
  });

  it('counts prompts, estimates tokens as chars/4 and builds each pattern\'s RunRequest', () => {
    const c = { ...defaultCompose(), prompts: [{ prompt: 'abcd' }, { prompt: 'efghij', input: { k: 1 } }] };
    assert.deepEqual(summarize(c, ENDPOINTS), { count: 2, chars: 10, tokens: 3, problem: null, warnings: [] });
    assert.deepEqual(buildRunRequest({ ...c, tags: ['role=chat'], maxTokens: '64', temperature: '0.5' }), {
      pattern: 'scatter', prompts: [{ prompt: 'abcd' }, { prompt: 'efghij', input: { k: 1 } }], tags: [['role', 'chat']], batch: true, stream: true, maxTokens: 64, temperature: 0.5,
    });
    const map = { ...c, pattern: 'map' as const, template: 'T {item}!', itemsText: 'x\n\nyy\n' };
    assert.equal(summarize(map, ENDPOINTS).count, 2);
    assert.equal(summarize(map, ENDPOINTS).chars, 'T x!'.length + 'T yy!'.length);
    assert.deepEqual(buildRunRequest({ ...map, compare: true, rounds: 4 }), {
      pattern: 'map', prompts: [], template: 'T {item}!', items: ['x', 'yy'], tags: [], batch: true, stream: true, compare: { rounds: 4, cacheSalt: true },
    });
    const broadcast = { ...c, pattern: 'broadcast' as const, prompt: 'hi', tags: ['role=chat'] };
    assert.equal(summarize(broadcast, ENDPOINTS).count, 3, 'one per chosen endpoint');
    assert.equal(summarize(broadcast, ENDPOINTS.map((e, i) => (i ? e : { ...e, status: 'excluded' }))).count, 2, 'excluded endpoints answer nothing');
    assert.equal(buildRunRequest(broadcast).batch, false, 'broadcast runs on the chat path');
    const tree = { ...c, pattern: 'tree-reduce' as const, itemsText: 'a\nb', reducePrompt: 'merge', fanin: 2 };
    assert.match(summarize(tree, ENDPOINTS).problem ?? '', /\{responses\}/);
    assert.deepEqual(buildRunRequest({ ...tree, reducePrompt: 'merge {responses}', compare: true }), {
      pattern: 'tree-reduce', prompts: [], template: c.template, items: ['a', 'b'], reducePrompt: 'merge {responses}', fanin: 2, tags: [], batch: false,
    });
    assert.match(summarize({ ...c, tags: ['role=nope'] }, ENDPOINTS).problem ?? '', /No endpoint/);
    assert.equal(defaultCompose().stream, true, 'batches stream by default: progress per prompt, a cancel keeps every finished answer');
    assert.equal(buildRunRequest({ ...c, stream: false }).stream, undefined);
    // The CLI's other generation parameters: each checked with one clear message, then sent as numbers and lists.
    const params = { ...c, system: 'Be brief.', topP: '0.9', seed: '7', stopText: 'END\n\n###', n: '2', extraText: '{"reasoning_effort": "low"}' };
    assert.equal(summarize(params, ENDPOINTS).problem, null);
    assert.deepEqual(
      (({ system, topP, seed, stop, n, extra }) => ({ system, topP, seed, stop, n, extra }))(buildRunRequest(params)),
      { system: 'Be brief.', topP: 0.9, seed: 7, stop: ['END', '###'], n: 2, extra: { reasoning_effort: 'low' } },
    );
    for (const [patch, message] of [
      [{ topP: '0' }, /top_p must be a number above 0, at most 1/],
      [{ seed: '1.5' }, /Seed must be a whole number/],
      [{ n: '16385' }, /n must be a whole number from 1 to 16,384/],
      [{ temperature: '0' }, /n must be 1 when temperature is 0/],
      [{ maxTokens: '0' }, /Max tokens must be a whole number of at least 1/],
      [{ extraText: '[1]' }, /Extra fields must be a JSON object/],
      [{ temperature: '3' }, /Temperature must be a number from 0 to 2/],
    ] as const) assert.match(summarize({ ...params, ...patch }, ENDPOINTS).problem ?? '', message);
    assert.equal(buildRunRequest({ ...broadcast, stream: true }).stream, undefined, 'broadcast is not streamed');
  });

  it('filters results by failures, text, regex and endpoint, in input order', () => {
    const store = new ResultsStore();
    store.reset(6, [row(4), row(0), row(2, { status: 'failed', ok: false, text: '', error: 'HTTP 503: overloaded' }), row(5, { endpoint: 'gpu09:8000' })]);
    assert.equal(store.length, 6);
    assert.equal(store.filtered(noFilter()).view, null, 'no filter: every row, pending ones too');
    const ids = (f: Partial<ReturnType<typeof noFilter>>) => [...(store.filtered({ ...noFilter(), ...f }).view ?? [])];
    assert.deepEqual(ids({ mode: 'failures' }), [2]);
    assert.deepEqual(ids({ mode: 'ok' }), [0, 4, 5]);
    assert.deepEqual(ids({ search: 'OVERLOADED' }), [2]);
    assert.deepEqual(ids({ search: '^answer [04]$', regex: true }), [0, 4]);
    assert.deepEqual(ids({ endpoint: 'gpu09:8000' }), [5]);
    assert.ok(store.filtered({ ...noFilter(), search: '(', regex: true }).error);
  });

  it('reports each arm as the median over rounds with its spread; bins and lanes for the charts', () => {
    const c = comparison(3);
    const rows = figureRows(c);
    const wall = rows.find((r) => r.label === 'wall time')!;
    const walls = c.rounds.filter((r) => r.arm === 'batched').map((r) => r.summary.wallMs).sort((a, b) => a - b);
    assert.deepEqual(wall.arms.batched, { median: walls[1], min: walls[0], max: walls[2], n: 3 });
    assert.equal(rows.find((r) => r.label === 'HTTP requests')!.arms.individual!.median, 60);
    assert.deepEqual(endpointRows(c).map((e) => [e.endpoint, e.arms.batched, e.arms.individual]), [
      ['gpu01:8000', { requests: 1, prompts: 20 }, { requests: 20, prompts: 20 }],
      ['gpu02:8000', { requests: 1, prompts: 20 }, { requests: 20, prompts: 20 }],
      ['gpu03:8000', { requests: 1, prompts: 20 }, { requests: 20, prompts: 20 }],
    ]);
    const h = histogram({ batched: [1, 2, 3], individual: [10] }, 3);
    assert.deepEqual(h.edges, [1, 4, 7, 10]);
    assert.deepEqual(h.counts, { batched: [3, 0, 0], individual: [0, 0, 1] });
    const lanes = timelineLanes([
      { endpoint: 'b', sentMs: 0, doneMs: 10, prompts: 1 },
      { endpoint: 'b', sentMs: 5, doneMs: 8, prompts: 1 },
      { endpoint: 'a', sentMs: 1, doneMs: 4, prompts: 2 },
      { endpoint: 'b', sentMs: 9, doneMs: 12, prompts: 1 },
    ]);
    assert.deepEqual(lanes.endpoints, ['a', 'b']);
    assert.deepEqual(lanes.slots, [1, 2], 'overlapping requests get their own row in the lane');
    assert.equal(lanes.endMs, 12);
  });

  it('"request sent" follows the path each batched row took: the batch chat endpoint, a rendered template, a raw list; individual rows their chat request', () => {
    const ctx = { batched: true, streamed: false, model: 'm', params: { batch: true, tags: [], maxTokens: 8 }, cacheSalt: null };
    const first = (r: ResultRow, c = ctx) => requestSentText(r, c, { position: 1, of: 2 }).split('\n');
    assert.deepEqual(first(row(0, { template: 'chat-batch' })).slice(0, 2), ['POST http://gpu01:8000/v1/chat/completions/batch', 'This prompt was item 1 of 2 in the request\'s "messages" list; the other 1 are left out below.']);
    assert.match(first(row(0, { template: 'skeleton' }))[2]!, /^Chat template: POST \/v1\/completions with prompts placed in the server's chat template/);
    assert.match(requestSentText(row(0, { template: 'skeleton' }), ctx, null), /"add_special_tokens": false/);
    assert.equal(first(row(0, { template: 'none' }))[0], 'POST http://gpu01:8000/v1/completions');
    assert.equal(first(row(0), { ...ctx, batched: false })[0], 'POST http://gpu01:8000/v1/chat/completions');
  });

  it('type-checks strictly with the DOM library (tsc -p webview)', () => {
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'webview'), '--noEmit'], { encoding: 'utf8' });
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
  });

  it('has no HTML sink in its source: text only', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (/\.(ts|css)$/.test(name)) files.push(p);
      }
    };
    walk(join(ROOT, 'webview'));
    const sinks = /\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|unsafeHTML|unsafeSVG|unsafeStatic|unsafeCSS|DOMParser|createContextualFragment|srcdoc|eval\s*\(|new Function)\b|setAttribute\(\s*['"](style|on\w+|href|src)['"]|\bstyleMap\b/;
    const hits = files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => [line, i] as const)
        .filter(([line]) => sinks.test(line) && !/^\s*(\*|\/\/)/.test(line))
        .map(([line, i]) => `${relative(ROOT, f)}:${i + 1}: ${line.trim()}`),
    );
    assert.deepEqual(hits, []);
    assert.ok(files.length > 10);
  });
});

// ---- the panel in Chromium --------------------------------------------------------------------

type HostGlobal = { __host: { sent: Array<PanelMessage & { __at: number }>; violations: unknown[]; post(m: unknown): void; makeRows(n: number, o?: object): ResultRow[]; jsonl(rows: ResultRow[]): string; state: unknown } };

let session: ReturnType<typeof panelSession>;
const pages: PanelPage[] = [];

async function panel(theme: Theme = 'dark', viewport?: { width: number; height: number }): Promise<PanelPage> {
  const p = await session.open(theme, viewport);
  pages.push(p);
  return p;
}

const sentMessages = (page: Page) => page.evaluate(() => (window as unknown as HostGlobal).__host.sent) as Promise<PanelMessage[]>;

async function nextSent<T extends PanelMessage['type']>(page: Page, type: T, method?: RequestMethod): Promise<Extract<PanelMessage, { type: T }>> {
  const handle = await page.waitForFunction(
    ([t, m]) => {
      const found = (window as unknown as HostGlobal).__host.sent.filter((x) => x.type === t && (!m || (x as { method?: string }).method === m));
      return found.length ? found[found.length - 1] : null;
    },
    [type, method ?? null] as const,
  );
  return (await handle.jsonValue()) as unknown as Extract<PanelMessage, { type: T }>;
}

/** Waits for a request of `method` and answers it. */
async function answer(page: Page, method: RequestMethod, value: unknown): Promise<Extract<PanelMessage, { type: 'request' }>> {
  const req = (await nextSent(page, 'request', method)) as Extract<PanelMessage, { type: 'request' }>;
  await host(page, { type: 'reply', requestId: req.requestId, ok: true, value });
  return req;
}

/** Clears what the panel has posted so far (so the next wait sees only new messages). */

async function assertClean(p: PanelPage): Promise<void> {
  const violations = await p.page.evaluate(() => (window as unknown as HostGlobal).__host.violations);
  assert.deepEqual(violations, [], 'no CSP violation');
  assert.deepEqual(p.problems, [], 'no console error or warning, no uncaught exception');
}

/** Resolves once the page has painted what it had (the frame after the next one): no fixed delay. */
const painted = (page: Page) => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));

async function shot(page: Page, name: string): Promise<void> {
  await painted(page);
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

const tab = (page: Page, name: string) => page.locator(`vscode-tab-header[data-tab="${name}"]`).click();
const setSelect = (page: Page, selector: string, value: string) =>
  page.locator(selector).evaluate((el, v) => {
    (el as HTMLElement & { value: string }).value = v;
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }, value);
const visibleRows = (page: Page) => page.locator('#results-table .vl-row:not([hidden])');
/** Ids used by more than one element of the page (shadow roots included). */
const duplicateIds = (page: Page) =>
  page.evaluate(() => {
    const seen = new Map<string, number>();
    const roots: Array<Document | ShadowRoot> = [document];
    while (roots.length) {
      const root = roots.pop()!;
      for (const el of Array.from<Element>(root.querySelectorAll('[id]'))) if (root === document) seen.set(el.id, (seen.get(el.id) ?? 0) + 1);
      for (const el of Array.from<Element>(root.querySelectorAll('*'))) if (el.shadowRoot) roots.push(el.shadowRoot);
    }
    return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
  }) as Promise<string[]>;
const cellTexts = (page: Page, cell: string) => page.locator(`#results-table .vl-row:not([hidden]) .c-${cell}`).allTextContents();

/** The shown rows' `cell` texts are `expected`, once the table has drawn them (a tab just shown draws its rows when its ResizeObserver reports a size, after its header). */
async function cellsAre(page: Page, cell: string, expected: string[], message?: string): Promise<void> {
  let shown: string[] = [];
  await until(async () => isDeepStrictEqual((shown = await cellTexts(page, cell)), expected), `the ${cell} cells`).catch(() => {});
  assert.deepEqual(shown, expected, message);
}

describe('webview: the panel in Chromium', { timeout: patience(300_000) }, () => {
  before(async () => {
    const built = join(ROOT, 'dist', 'webview', 'panel.js');
    let newest = 0;
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        const s = statSync(p);
        if (s.isDirectory()) walk(p);
        else newest = Math.max(newest, s.mtimeMs);
      }
    };
    walk(join(ROOT, 'webview'));
    let builtAt = 0;
    try {
      builtAt = statSync(built).mtimeMs;
    } catch {
      /* missing */
    }
    assert.ok(builtAt >= newest, 'dist/webview is missing or older than webview/: run `npm run build`');
  });
  session = panelSession();

  it('says ready first, renders nothing from the host before init, then shows its endpoints and history', async () => {
    const p = await panel();
    const { page } = p;
    await page.locator('#compose').waitFor();
    const first = await sentMessages(page);
    assert.deepEqual(first.map((m) => m.type), ['ready'], 'ready is the first and only message');
    assert.match(await page.locator('.conn').textContent() ?? '', /Waiting for the extension/);
    assert.equal(await page.locator('#run').evaluate((b) => (b as HTMLElement & { disabled: boolean }).disabled), true);
    assert.equal(await page.locator('.tag').count(), 0);
    await tab(page, 'history');
    await page.locator('#history-empty').waitFor();

    await host(page, { type: 'init', state: initState() });
    await page.locator('#history-table tbody tr').first().waitFor();
    assert.equal(await page.locator('#history-table tbody tr').count(), 3);
    await tab(page, 'compose');
    assert.equal(await page.locator('#endpoint-count').textContent().then((t) => t?.replace(/\s+/g, ' ').trim()), 'All 4 endpoints · 1 down');
    assert.deepEqual(await page.locator('.tag').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.tag)), ['rack=x1', 'rack=x2', 'role=chat', 'role=embed']);
    assert.match((await page.locator('.conn').textContent() ?? '').replace(/\s+/g, ' '), /4 endpoints · 3 healthy, 1 down · .*aurora\.hostfile/);

    // Partly down, then all down: said before Run, which runs anyway when asked.
    await page.locator('#add-prompt').click();
    await page.locator('#prompt-editor textarea').fill('a prompt');
    await page.locator('#health-warning', { hasText: '1 of 4 endpoints are down (gpu04:8000): the other 3 get their prompts.' }).waitFor();
    assert.equal((await page.locator('#run').textContent())!.trim(), 'Run anyway');
    await page.locator('.tag[data-tag="role=chat"]').click();
    await page.locator('#health-warning').waitFor({ state: 'detached' });
    assert.equal((await page.locator('#run').textContent())!.trim(), 'Run', 'the chosen endpoints are all up');
    await page.locator('.tag[data-tag="role=chat"]').click();
    const allDown = ENDPOINTS.map((e) => ({ ...e, status: 'down' as const }));
    await host(page, { type: 'endpoints', connected: true, source: 'refuse.hostfile', endpoints: allDown });
    await page.locator('#health-warning', { hasText: 'All 4 endpoints are down: every prompt will fail.' }).waitFor();
    assert.match((await page.locator('.conn').textContent() ?? '').replace(/\s+/g, ' '), /4 endpoints · 0 healthy, 4 down · refuse\.hostfile/);
    assert.equal(await page.locator('.conn').getAttribute('data-health'), 'down');
    assert.match((await page.locator('#endpoint-count').textContent())!, /all down/);
    await shot(page, 'all-down-warning');
    await clearSent(page);
    await page.locator('#run').click();
    assert.equal((await nextSent(page, 'request', 'run')).method, 'run', 'Run anyway runs');

    await host(page, { type: 'endpoints', connected: false, source: null, endpoints: [] });
    await page.locator('.conn[data-state="off"]').waitFor();
    assert.equal(first.filter((m) => m.type === 'ready').length + (await sentMessages(page)).filter((m) => m.type === 'ready').length, 1, 'ready is said once');
    await assertClean(p);
  });

  it('composes: types prompts, imports a CSV through a column choice, counts a template\'s items, saves the set', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    await page.locator('#add-prompt').click();
    await page.locator('#prompt-editor textarea').pressSequentially('What is a swarm?');
    await page.locator('#add-prompt').focus();
    await page.keyboard.press('Enter');
    await page.locator('#prompt-editor textarea').fill('Explain batching in one line.');
    await page.waitForFunction(() => document.querySelector('#prompt-count')?.textContent === '2');
    const chars = 'What is a swarm?'.length + 'Explain batching in one line.'.length;
    await page.locator('#token-estimate', { hasText: new RegExp(`^${Math.ceil(chars / 4)}$`) }).waitFor();

    // Tab order runs along the toolbar; Space presses the focused button.
    await clearSent(page);
    await page.locator('#add-prompt').focus();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'import');
    await page.keyboard.press('Space');
    await answer(page, 'importFile', { name: 'questions.csv', text: 'id,question,topic\n1,"Why is the sky blue?",physics\n2,"What is, in short, a CSV?",formats\n3,"",empty\n' });
    await page.locator('#import-dialog').waitFor();
    assert.deepEqual(await page.locator('#import-column vscode-option').allTextContents(), ['id', 'question', 'topic']);
    assert.equal(await page.locator('#import-column').evaluate((s) => (s as HTMLElement & { value: string }).value), 'question', 'suggests the prompt-like column');
    await setSelect(page, '#import-column', 'topic');
    await page.locator('#import-dialog .preview li').first().filter({ hasText: 'physics' }).waitFor();
    await setSelect(page, '#import-column', 'question');
    await page.locator('#import-dialog .preview li').first().filter({ hasText: 'Why is the sky blue?' }).waitFor();
    assert.match(await page.locator('#import-dialog').textContent() ?? '', /input.*id, topic/s);
    await page.locator('#import-append').click();
    await page.waitForFunction(() => document.querySelector('#prompt-count')?.textContent === '4');
    assert.equal(await page.locator('#prompt-list').getAttribute('data-count'), '4');
    await page.locator('#prompt-list .vl-row[data-index="3"]').click();
    assert.equal(await page.locator('#prompt-editor textarea').inputValue(), 'What is, in short, a CSV?');
    assert.match(await page.locator('.editor .kvs').textContent() ?? '', /id\s+2.*topic\s+formats/s);

    // Delete from the keyboard: the list takes focus, Delete removes the active prompt.
    await page.locator('#prompt-list .pl-scroll').focus();
    await page.keyboard.press('Delete');
    await page.waitForFunction(() => document.querySelector('#prompt-count')?.textContent === '3');

    await page.locator('#save-set').click();
    const save = await answer(page, 'savePromptSet', '/work/exp/questions.prompts.jsonl');
    assert.deepEqual((save.params as { prompts: unknown[] }).prompts, [
      { prompt: 'What is a swarm?' },
      { prompt: 'Explain batching in one line.' },
      { prompt: 'Why is the sky blue?', input: { id: '1', topic: 'physics' } },
    ]);
    await page.locator('.notice', { hasText: 'Saved 3 prompts to /work/exp/questions.prompts.jsonl' }).waitFor();

    await page.locator('#pattern input[value="map"]').click();
    await page.locator('#template textarea').fill('Give one fact about {item}.');
    await page.locator('#items textarea').fill('hydrogen\nhelium\n\nlithium\n');
    await page.waitForFunction(() => document.querySelector('#prompt-count')?.textContent === '3');
    const mapChars = ['hydrogen', 'helium', 'lithium'].reduce((s, i) => s + `Give one fact about ${i}.`.length, 0);
    await page.locator('#token-estimate', { hasText: new RegExp(`^${Math.ceil(mapChars / 4)}$`) }).waitFor();
    await assertClean(p);
  });

  it('Run sends the RunRequest the composition describes (scatter, compare, tree-reduce)', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    for (const text of ['first prompt', 'second prompt']) {
      await page.locator('#add-prompt').click();
      await page.locator('#prompt-editor textarea').fill(text);
    }
    await page.locator('.tag[data-tag="role=chat"]').click();
    await page.locator('#endpoint-count', { hasText: '3 of 4 endpoints carry role=chat' }).waitFor();
    await setSelect(page, '#model', 'llama-3.1-8b');
    await page.locator('#max-tokens input').fill('64');
    await page.locator('#temperature input').fill('0.2');
    await page.locator('#batch').click();
    await page.locator('#run').click();
    const run = await nextSent(page, 'request', 'run');
    assert.deepEqual((run.params as { request: RunRequest }).request, {
      pattern: 'scatter', prompts: [{ prompt: 'first prompt' }, { prompt: 'second prompt' }], tags: [['role', 'chat']], batch: false, model: 'llama-3.1-8b', maxTokens: 64, temperature: 0.2, stream: true,
    } satisfies RunRequest);

    await clearSent(page);
    await page.locator('#compare-toggle').click();
    await page.locator('#rounds input').fill('2');
    await page.locator('#run').click();
    const compare = await nextSent(page, 'request', 'run');
    assert.deepEqual((compare.params as { request: RunRequest }).request.compare, { rounds: 2, cacheSalt: true });

    await clearSent(page);
    await page.locator('#pattern input[value="tree-reduce"]').click();
    // The prompt set can become the tree's items.
    await page.locator('#items-from-prompts').click();
    await page.waitForFunction(() => (document.querySelector('#items') as unknown as { value: string } | null)?.value === 'first prompt\nsecond prompt');
    await page.locator('#items textarea').fill('a\nb\nc');
    await page.locator('#reduce-prompt textarea').fill('Merge these:');
    await page.locator('#reduce-check[role="alert"]').waitFor();
    assert.equal(await page.locator('#run').evaluate((b) => (b as HTMLElement & { disabled: boolean }).disabled), true, 'no {responses}: no run');
    await page.locator('#reduce-prompt textarea').fill('Merge these: {responses}');
    await page.locator('#fanin input').fill('2');
    await page.locator('#reduce-check:not([role])').waitFor();
    await page.locator('#run').click();
    const tree = await nextSent(page, 'request', 'run');
    assert.deepEqual((tree.params as { request: RunRequest }).request, {
      pattern: 'tree-reduce', prompts: [], template: defaultCompose().template, items: ['a', 'b', 'c'], reducePrompt: 'Merge these: {responses}', fanin: 2, tags: [['role', 'chat']], batch: false, model: 'llama-3.1-8b', maxTokens: 64, temperature: 0.2,
    });
    // A run the host refuses says why (its reply is an error; no run starts).
    await host(page, { type: 'reply', requestId: tree.requestId, ok: false, error: 'every endpoint is excluded' });
    await page.locator('.notice[data-kind="error"]', { hasText: 'The run did not start: every endpoint is excluded' }).waitFor();
    await clearSent(page);
    assert.equal(await page.locator('#cancel').evaluate((b) => (b as HTMLElement & { disabled: boolean }).disabled), true, 'nothing to cancel');
    await host(page, started('r', 3, 'tree-reduce of 3 items', { pattern: 'tree-reduce' }));
    await page.locator('#cancel:not([disabled])').click();
    await nextSent(page, 'cancel');
    await assertClean(p);
  });

  it('streams runProgress into the table in input order, once per frame, and shows the summary', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    await host(page, started('r1', 30, 'questions · 30 prompts', { prompts: Array.from({ length: 30 }, (_, i) => `question ${i}`) }));
    await page.locator('#results-table').waitFor();
    assert.equal(await page.locator('#progress-total').textContent(), '30', 'the total shows from the start');
    assert.equal(await page.locator('#results-table').getAttribute('data-count'), '30', 'pending rows show too');
    const batch = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => row(from + k));
    await host(page, { type: 'runProgress', runId: 'r1', done: 10, ok: 10, failed: 0, total: 30, elapsedMs: 400, resultsJsonl: jsonl(batch(20, 30)) });
    await page.locator('#progress-done', { hasText: '10' }).waitFor();
    const early = await cellTexts(page, 'status');
    assert.deepEqual(early.slice(0, 3), ['pending', 'pending', 'pending']);
    assert.deepEqual((await cellTexts(page, 'prompt')).slice(0, 2), ['question 0', 'question 1'], 'a pending row shows its prompt');
    await host(page, { type: 'runProgress', runId: 'r1', done: 20, ok: 20, failed: 0, total: 30, elapsedMs: 800, resultsJsonl: jsonl(batch(0, 10)) });
    await host(page, { type: 'runProgress', runId: 'other', done: 1, ok: 1, failed: 0, total: 1, elapsedMs: 1, resultsJsonl: jsonl([row(10, { text: 'WRONG RUN' })]) });
    await host(page, { type: 'runProgress', runId: 'r1', done: 30, ok: 29, failed: 1, total: 30, elapsedMs: 1200, resultsJsonl: jsonl([...batch(10, 15), row(15, { status: 'failed', ok: false, text: '', error: 'HTTP 500: boom' }), ...batch(16, 20)]) });
    await page.locator('#progress-done', { hasText: '30' }).waitFor();
    const idx = await cellTexts(page, 'idx');
    assert.deepEqual(idx.map(Number).sort((a, b) => a - b).slice(0, 20), Array.from({ length: 20 }, (_, i) => i + 1));
    const byIndex = await page.locator('#results-table .vl-row:not([hidden])').evaluateAll((rows) =>
      rows.map((r) => ({ y: r.getBoundingClientRect().top, i: Number(r.querySelector('.c-idx')!.textContent) - 1, resp: r.querySelector('.c-resp')!.textContent })).sort((a, b) => a.y - b.y),
    );
    assert.deepEqual(byIndex.slice(0, 16).map((r) => r.i), Array.from({ length: 16 }, (_, i) => i), 'rows stand in input order');
    assert.equal(byIndex[10]!.resp, 'answer 10', 'a message of another run changes nothing');
    assert.equal(byIndex[15]!.resp, 'HTTP 500: boom', 'a failed prompt shows the server\'s message');
    // A failure is not an answer: the count says them apart.
    assert.equal((await page.locator('#shown-count').textContent())!.replace(/\s+/g, ' ').trim(), '29 of 30 answered · 1 failed');

    // A burst of progress messages in one task is drawn at most once per animation frame.
    const draws = await page.evaluate(async () => {
      const target = document.querySelector('#progress-done')!;
      let n = 0;
      const mo = new MutationObserver(() => n++);
      mo.observe(target.parentElement!.parentElement!, { subtree: true, characterData: true, childList: true });
      const H = (window as unknown as HostGlobal).__host;
      for (let i = 1; i <= 40; i++) H.post({ type: 'runProgress', runId: 'r1', done: 30, ok: 29, failed: 1, total: 30, elapsedMs: 1200 + i, resultsJsonl: '' });
      // Until the last one is drawn (1,240 ms), then one frame more for any draw still owed.
      do await new Promise<void>((r) => requestAnimationFrame(() => r()));
      while (!document.querySelector('#run-status')!.textContent.includes('1.24 s'));
      await new Promise<void>((r) => requestAnimationFrame(() => r()));
      mo.disconnect();
      return n;
    });
    assert.ok(draws <= 6, `40 messages drew the progress ${draws} times`);

    await host(page, finished('r1', { summary: summary({ prompts: 30, ok: 29, failed: 1 }) }));
    await page.locator('#run-figures').waitFor();
    assert.match(await page.locator('#run-figures').textContent() ?? '', /wall time\s*2\.40 s.*HTTP requests\s*3/s);
    assert.deepEqual(await page.locator('#latency-table tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from<Element>(tr.children).map((c) => c.textContent!.trim()).join(' '))), ['E2EL 1.80 s 1.75 s 2.20 s 2.35 s'], 'unstreamed: E2EL only');
    assert.match(await page.locator('#run-status').textContent() ?? '', /done/);
    await assertClean(p);
  });

  it('an unstreamed batch: the servers\' /metrics in the run bar (running, waiting, finished, tokens; who did not answer) and the bar follows the sequences they finished, until the answers come; at 400 px too', async () => {
    const p = await panel('dark', { width: 400, height: 700 });
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    await host(page, started('u1', 2000, 'unstreamed · 2,000 prompts'));
    await host(page, { type: 'runProgress', runId: 'u1', done: 0, ok: 0, failed: 0, total: 2000, elapsedMs: 1000, resultsJsonl: '' });
    assert.equal(await page.locator('#run-servers').count(), 0, 'no servers line before a reading');
    const servers = { answered: 999, asked: 1000, endpoints: 1000, running: 1812, waiting: 188, finished: 700, generationTokens: 45120, preemptions: 0, prefixCacheQueries: 0, prefixCacheHits: 0, runningBand: null, waitingBand: null, kvCacheUsage: null, atMs: 2000 };
    await host(page, { type: 'runProgress', runId: 'u1', done: 0, ok: 0, failed: 0, total: 2000, elapsedMs: 2000, resultsJsonl: '', servers });
    const line = page.locator('#run-servers');
    await line.waitFor();
    assert.equal(((await line.textContent()) ?? '').replace(/\s+/g, ' ').trim(), 'servers: 1,812 running · 188 waiting · 700 finished · 45,120 tokens · 1 not answering');
    assert.match((await line.getAttribute('title')) ?? '', /999 of 1,000 endpoints answered[\s\S]*vllm:num_requests_running[\s\S]*vllm:generation_tokens_total/);
    const bar = () => page.locator('#run-status vscode-progress-bar').evaluate((b) => [(b as HTMLElement & { value: number }).value, b.getAttribute('aria-label')]);
    assert.deepEqual(await bar(), [35, 'Run progress (sequences the servers finished)'], 'the bar at the servers\' 700 of 2,000');
    assert.equal(await page.locator('#progress-done').textContent(), '0', 'the count stays the answers that came back');
    await shot(page, 'run-servers-400');
    // The answers come: the count leads again; the run ends and the line goes.
    await host(page, { type: 'runProgress', runId: 'u1', done: 1500, ok: 1500, failed: 0, total: 2000, elapsedMs: 3000, resultsJsonl: '', servers: { ...servers, finished: 1600, running: 400, waiting: 0 } });
    await page.locator('#progress-done', { hasText: '1,500' }).waitFor();
    assert.deepEqual(await bar(), [80, 'Run progress (sequences the servers finished)']);
    await host(page, finished('u1', { label: 'unstreamed · 2,000 prompts', summary: summary({ prompts: 2000, ok: 2000 }) }));
    await page.locator('#run-status[data-state="done"]').waitFor();
    assert.equal(await line.count(), 0, 'a finished run shows its answers, not the servers');
    await assertClean(p);
  });

  it('a streamed run: TTFT and TPOT per prompt, E2EL/TTFT/TPOT/ITL mean and percentiles; the Stream toggle asks for it', async () => {
    const p = await panel('dark', { width: 1280, height: 800 });
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    await host(page, started('s1', 4, 'streamed · 4 prompts', { context: { ...CONTEXT, params: { batch: true, stream: true, tags: [] } } }));
    await page.locator('#results-table').waitFor();
    // Prompt i: sent at 10 + i, first token 40 ms later, 30 + i tokens, done at 110 + 2i (row()).
    const rows = Array.from({ length: 4 }, (_, i) => row(i, { timings: { queuedMs: 1, sentMs: 10 + i, firstByteMs: 20 + i, firstTokenMs: 50 + i, doneMs: 110 + 2 * i } }));
    await host(page, { type: 'runProgress', runId: 's1', done: 4, ok: 4, failed: 0, total: 4, elapsedMs: 200, resultsJsonl: jsonl(rows) });
    await page.locator('#progress-done', { hasText: '4' }).waitFor();
    await cellsAre(page, 'ttft', ['40 ms', '40 ms', '40 ms', '40 ms']);
    await cellsAre(page, 'tpot', ['2.1 ms', '2.0 ms', '2.0 ms', '2.0 ms'], '(done − first token) / (tokens − 1)');
    assert.ok(await page.locator('#results-table .rt-th.c-ttft').isVisible(), 'the TTFT heading shows at 1,280 px');
    const stats = (mean: number) => ({ meanMs: mean, medianMs: mean + 1, p90Ms: mean + 2, p99Ms: mean + 3 });
    await host(page, finished('s1', { summary: summary({ streamed: true, prompts: 4, ok: 4, failed: 0, e2el: stats(100), ttft: stats(40), tpot: stats(2), itl: stats(3) }) }));
    await page.locator('#latency-table tbody tr[data-metric="ITL"]').waitFor();
    assert.deepEqual(await page.locator('#latency-table tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from<Element>(tr.children).map((c) => c.textContent!.trim()).join(' '))), [
      'E2EL 100 ms 101 ms 102 ms 103 ms',
      'TTFT 40 ms 41 ms 42 ms 43 ms',
      'TPOT 2.0 ms 3.0 ms 4.0 ms 5.0 ms',
      'ITL 3.0 ms 4.0 ms 5.0 ms 6.0 ms',
    ]);
    assert.match(await page.locator('#run-figures').textContent() ?? '', /batched · streamed/);
    await shot(page, 'results-streamed-1280');
    // One-token answers (or whole answers in one read): no ITL, and its cells say why; a gap under a millisecond keeps its digits.
    await host(page, finished('s1', { summary: summary({ streamed: true, prompts: 4, ok: 4, failed: 0, e2el: stats(100), ttft: stats(40), tpot: { meanMs: 0.04, medianMs: 0.0026, p90Ms: 0.5, p99Ms: 0.0000004 }, itl: null }) }));
    const itlRow = page.locator('#latency-table tbody tr[data-metric="ITL"]');
    await page.waitForFunction(() => document.querySelector('#latency-table tbody tr[data-metric="ITL"] td')?.textContent.trim() === '—');
    assert.match((await itlRow.locator('td').first().getAttribute('title')) ?? '', /No inter-token gap was measured/);
    assert.deepEqual(await page.locator('#latency-table tbody tr[data-metric="TPOT"] td').allTextContents(), ['0.04 ms', '0.0026 ms', '0.5 ms', '< 0.001 ms']);
    assert.equal(await page.locator('#latency-table tbody tr[data-metric="TPOT"] td').first().getAttribute('title'), '', 'a value needs no reason');
    await page.setViewportSize({ width: 630, height: 800 });
    await page.waitForFunction(() => !document.querySelector('#results-table .rt-th.c-ttft')?.checkVisibility());
    await shot(page, 'results-streamed-630');
    await page.setViewportSize({ width: 400, height: 800 });
    await shot(page, 'results-streamed-400');

    await tab(page, 'compose');
    assert.equal(await page.locator('#stream').evaluate((c) => (c as HTMLElement & { checked: boolean }).checked), true, 'on by default');
    await page.locator('#stream').scrollIntoViewIfNeeded();
    await shot(page, 'compose-stream-400');
    await page.locator('#add-prompt').click();
    await page.locator('#prompt-editor').evaluate((el) => {
      (el as HTMLElement & { value: string }).value = 'hi';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await clearSent(page);
    await page.locator('#run').click();
    const req = (await nextSent(page, 'request', 'run')) as Extract<PanelMessage, { method: 'run' }>;
    assert.equal(req.params.request.stream, true);
    await assertClean(p);
  });

  it('an open row shows the request that carried its prompt: URL, body from the run\'s parameters, its place in a batch, cache_salt; as text', async () => {
    const p = await panel('dark', { width: 900, height: 900 });
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    const params = { batch: true, maxTokens: 64, temperature: 0.2, seed: 7, extra: { reasoning_effort: 'low', cache_salt: 'salt-1' }, tags: [] };
    await host(page, started('b1', 4, 'batched · 4 prompts', { context: { ...CONTEXT, params } }));
    // Prompts 0, 1 and 3 went in one request to gpu01 (same send time); prompt 2 alone to gpu02.
    const at = (i: number, endpoint: string, sentMs: number, over = {}) => row(i, { endpoint, timings: { queuedMs: 1, sentMs, firstByteMs: null, firstTokenMs: null, doneMs: sentMs + 90 }, ...over });
    const rows = [at(0, 'gpu01:8000', 5), at(1, 'gpu01:8000', 5), at(2, 'gpu02:8000', 6), at(3, 'gpu01:8000', 5, { prompt: '<img src=x onerror=alert(1)> what?' })];
    await host(page, { type: 'runProgress', runId: 'b1', done: 4, ok: 4, failed: 0, total: 4, elapsedMs: 100, resultsJsonl: jsonl(rows) });
    await host(page, finished('b1', { context: { ...CONTEXT, params }, summary: summary({ prompts: 4, ok: 4, failed: 0 }) }));
    await page.locator('#run-figures').waitFor();
    await page.locator('#results-table .rt-scroll').focus();
    for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    const open = page.locator('#results-table .vl-row[aria-expanded="true"]');
    await open.locator('.vl-sent > summary').click();
    const text = await open.locator('.vl-sent pre').textContent();
    assert.equal(
      text,
      [
        'POST http://gpu01:8000/v1/completions',
        'This prompt was item 3 of 3 in the request\'s "prompt" list; the other 2 are left out below.',
        'cache_salt: salt-1',
        '',
        JSON.stringify({ reasoning_effort: 'low', cache_salt: 'salt-1', model: 'llama-3.1-8b', max_tokens: 64, temperature: 0.2, seed: 7, prompt: ['<img src=x onerror=alert(1)> what?'], return_token_ids: true }, null, 2),
      ].join('\n'),
    );
    assert.equal(await open.locator('.vl-sent img').count(), 0, 'the prompt is text');
    await shot(page, 'results-request-sent');
    await assertClean(p);
  });

  it('a cancelled run says it was cancelled and counts its cancelled prompts; a failed run says why', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    // As the host sends a cancelled run: every prompt settles (the unanswered ones as 'cancelled'),
    // progress counts them as done but neither ok nor failed, and the core sets error 'cancelled'.
    const cancelledRow = (i: number) => row(i, { status: 'cancelled', ok: false, text: '', error: 'cancelled', finishReason: null, completionTokens: null, timings: { queuedMs: 1, sentMs: null, firstByteMs: null, firstTokenMs: null, doneMs: 900 } });
    const rows = [...Array.from({ length: 5 }, (_, i) => row(i)), ...Array.from({ length: 5 }, (_, i) => cancelledRow(5 + i))];
    const sum = summary({ prompts: 10, ok: 5, failed: 0, cancelled: 5 });
    await host(page, started('c9', 10, 'hung run'));
    await host(page, { type: 'runProgress', runId: 'c9', done: 10, ok: 5, failed: 0, total: 10, elapsedMs: 900, resultsJsonl: jsonl(rows) });
    await host(page, finished('c9', { summary: sum, cancelled: true }));
    const status = page.locator('#run-status');
    await page.locator('#run-status[data-state="cancelled"]').waitFor();
    const line = (await status.textContent())!.replace(/\s+/g, ' ');
    assert.match(line, /10 \/ 10 · 5 ok · 5 cancelled · .* · cancelled/, line);
    assert.doesNotMatch(line, /\bdone\b|failed/, line);
    await page.locator('.notice', { hasText: 'Run cancelled' }).waitFor();
    assert.equal(await page.locator('.notice', { hasText: 'Run failed' }).count(), 0, 'a cancel is no failure');
    assert.equal((await page.locator('#shown-count').textContent())!.replace(/\s+/g, ' ').trim(), '5 of 10 answered · 5 cancelled');
    assert.match(await page.locator('#run-figures').textContent() ?? '', /prompts\s*5 ok · 0 failed · 5 cancelled/);
    assert.deepEqual((await cellTexts(page, 'status')).slice(4, 7), ['ok', 'cancelled', 'cancelled']);
    await shot(page, 'results-cancelled');
    // A finished run with cancelled prompts offers to run the rest (failed ones: none here).
    assert.equal(await page.locator('#continue-run [data-action="continue-failed"]').count(), 0);
    await clearSent(page);
    await page.locator('#continue-run [data-action="continue-remaining"]', { hasText: 'Run remaining (5)' }).click();
    const cont = (await nextSent(page, 'request', 'continueRun')) as Extract<PanelMessage, { method: 'continueRun' }>;
    assert.deepEqual(cont.params, { id: 'c9', only: 'remaining' });

    // Reopened from history (or shown after the webview missed the end): still cancelled.
    await host(page, { type: 'showRun', record: record('c9', '2026-11-02T10:40:00.000Z', { label: 'hung run', summary: sum }), resultsJsonl: jsonl(rows) });
    await page.locator('#run-status[data-state="cancelled"] .run-label', { hasText: /^hung run$/ }).waitFor();
    assert.match((await status.textContent())!.replace(/\s+/g, ' '), /10 \/ 10 · 5 ok · 5 cancelled · .* · cancelled/);
    assert.equal((await page.locator('#shown-count').textContent())!.replace(/\s+/g, ' ').trim(), '5 of 10 answered · 5 cancelled');

    // A run that ended on an error says so, with the error.
    await host(page, started('e1', 4, 'broken run'));
    await host(page, { type: 'runProgress', runId: 'e1', done: 4, ok: 1, failed: 3, total: 4, elapsedMs: 50, resultsJsonl: jsonl([row(0), ...[1, 2, 3].map((i) => row(i, { status: 'failed', ok: false, text: '', error: 'every endpoint serving llama is down' }))]) });
    await host(page, finished('e1', { summary: summary({ prompts: 4, ok: 1, failed: 3 }), error: 'every endpoint serving llama is down' }));
    await page.locator('#run-status[data-state="failed"]').waitFor();
    assert.match((await status.textContent())!.replace(/\s+/g, ' '), /4 \/ 4 · 1 ok · 3 failed · .* · failed: every endpoint serving llama is down/);
    await page.locator('.notice[data-kind="error"]', { hasText: 'Run failed: every endpoint serving llama is down' }).waitFor();
    await page.locator('#continue-run [data-action="continue-failed"]', { hasText: 'Rerun failed (3)' }).waitFor();
    await assertClean(p);
  });

  it('Drain beside Cancel while a run goes posts drain; a drained run\'s run bar says drained, not done, here and reopened', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    assert.equal(await page.locator('#drain').evaluate((b) => (b as HTMLElement & { disabled: boolean }).disabled), true, 'nothing to drain');
    await host(page, started('d1', 10, 'drained run'));
    await clearSent(page);
    await page.locator('#drain:not([disabled])').click();
    await nextSent(page, 'drain');
    const DRAINED = 'drained: not sent (the run was drained; --resume sends it)';
    const drainedRow = (i: number) => row(i, { status: 'cancelled', ok: false, text: '', error: DRAINED, finishReason: null, completionTokens: null, timings: { queuedMs: 1, sentMs: null, firstByteMs: null, firstTokenMs: null, doneMs: 900 } });
    const rows = [...Array.from({ length: 4 }, (_, i) => row(i)), ...Array.from({ length: 6 }, (_, i) => drainedRow(4 + i))];
    const sum = summary({ prompts: 10, ok: 4, failed: 0, cancelled: 6 });
    await host(page, { type: 'runProgress', runId: 'd1', done: 10, ok: 4, failed: 0, total: 10, elapsedMs: 900, resultsJsonl: jsonl(rows) });
    await host(page, finished('d1', { summary: sum, cancelled: false, drained: true }));
    const status = page.locator('#run-status');
    await page.locator('#run-status[data-state="drained"]').waitFor();
    const line = (await status.textContent())!.replace(/\s+/g, ' ');
    assert.match(line, /10 \/ 10 · 4 ok · 6 cancelled · .* · drained/, line);
    assert.doesNotMatch(line, /\bdone\b|failed/, line);
    await shot(page, 'results-drained');
    assert.equal(await page.locator('#drain').evaluate((b) => (b as HTMLElement & { disabled: boolean }).disabled), true, 'no run to drain once it ended');
    // Reopened from history: still drained.
    await host(page, { type: 'showRun', record: record('d1', '2026-11-02T10:41:00.000Z', { label: 'drained run', summary: sum, drained: true }), resultsJsonl: jsonl(rows) });
    await page.locator('#run-status[data-state="drained"] .run-label', { hasText: /^drained run$/ }).waitFor();
    await assertClean(p);
  });

  it('a detached run opened while it goes: the run bar says running, with its status file\'s progress, not done; ended, done', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    // Its rows so far (3 of 40, one kept by an earlier run), its status file's counts in the record.
    const rows = [row(0), row(1), row(2)];
    const going = record('detached-r1', '2026-11-02T10:42:00.000Z', { label: 'detached scatter r1', summary: summary({ prompts: 40, ok: 2, failed: 0, cancelled: 0, wallMs: 3000 }), detached: { state: 'running', where: 'me@login', done: 2 } });
    await host(page, { type: 'showRun', record: going, resultsJsonl: jsonl(rows) });
    const status = page.locator('#run-status');
    await page.locator('#run-status[data-state="running"][data-run="detached-r1"]').waitFor();
    const line = (await status.textContent())!.replace(/\s+/g, ' ');
    assert.match(line, /2 \/ 40 · 2 ok · .* · running/, line);
    assert.doesNotMatch(line, /\bdone\b/, line);
    // Nothing of it runs in this panel: Run stays free, there is nothing here to cancel.
    assert.equal(await page.locator('#cancel').evaluate((b) => (b as HTMLElement & { disabled: boolean }).disabled), true);
    await host(page, { type: 'showRun', record: { ...going, summary: summary({ prompts: 40, ok: 30, failed: 0, wallMs: 9000 }), detached: { state: 'running', where: 'me@login', done: 30 } }, resultsJsonl: jsonl(rows) });
    await page.locator('#progress-done', { hasText: /^30$/ }).waitFor();
    await shot(page, 'results-detached-running');
    const all = Array.from({ length: 40 }, (_, i) => row(i));
    await host(page, { type: 'showRun', record: { ...going, summary: summary({ prompts: 40, ok: 40, failed: 0, wallMs: 12000 }), detached: { state: 'finished', exitCode: 0, where: 'me@login', done: 40 } }, resultsJsonl: jsonl(all) });
    await page.locator('#run-status[data-state="done"][data-run="detached-r1"]').waitFor();
    assert.match((await status.textContent())!.replace(/\s+/g, ' '), /40 \/ 40 · 40 ok · .* · done/);
    await assertClean(p);
  });

  it('filters by failures, regex and endpoint; expands, copies and opens a row; keyboard moves through the table', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    await page.evaluate((rec) => {
      const H = (window as unknown as HostGlobal).__host;
      H.post({ type: 'showRun', record: rec, resultsJsonl: H.jsonl(H.makeRows(200, { failEvery: 10 })) });
    }, record('run-200', '2026-11-02T10:20:00.000Z', { label: '200 prompts' }));
    await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '200');
    await setSelect(page, '#filter-mode', 'failures');
    await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '20');
    assert.deepEqual(new Set(await cellTexts(page, 'status')), new Set(['failed']));
    assert.match((await cellTexts(page, 'resp'))[0]!, /^HTTP 500 from server: out of KV cache blocks \(request 9\)$/);
    assert.match(await page.locator('#shown-count').textContent() ?? '', /20 of 200 shown/);

    await setSelect(page, '#filter-mode', 'all');
    await page.locator('#regex').click();
    await page.locator('#search input').fill('^answer 1[0-2]:');
    await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '3');
    await cellsAre(page, 'idx', ['11', '12', '13'], 'prompts are numbered from 1');
    await page.locator('#search input').fill('answer (');
    await page.locator('#search-error').waitFor();
    await page.locator('#search input').fill('');
    await setSelect(page, '#filter-endpoint', 'gpu02:8000');
    await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '50');
    assert.deepEqual(new Set(await cellTexts(page, 'ep')), new Set(['gpu02:8000']));
    await page.locator('#clear-filter').click();
    await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '200');

    // Keyboard: the grid takes focus, arrows move, Enter opens, Escape closes.
    await page.locator('#results-table .rt-scroll').focus();
    for (let i = 0; i < 10; i++) await page.keyboard.press('ArrowDown');
    const outline = await page.locator('#results-table .vl-row.active').evaluate((r) => getComputedStyle(r).outlineStyle);
    assert.equal(outline, 'solid', 'the active row shows focus');
    await page.keyboard.press('Enter');
    const open = page.locator('#results-table .vl-row[aria-expanded="true"]');
    await open.waitFor();
    assert.equal(await open.locator('.c-idx').textContent(), '10');
    assert.match(await open.locator('.vl-detail').textContent() ?? '', /Server message\s*HTTP 500 from server: out of KV cache blocks \(request 9\)/);
    assert.equal(await page.locator('#results-table .rt-scroll').getAttribute('aria-activedescendant'), 'rt-row-9');
    await clearSent(page);
    await open.locator('[data-action="copy-response"]').click();
    const copy = await answer(page, 'copy', null);
    assert.deepEqual(copy.params, { text: 'HTTP 500 from server: out of KV cache blocks (request 9)' });
    await open.locator('[data-action="open-prompt"]').click();
    const opened = await answer(page, 'openInEditor', null);
    assert.deepEqual(opened.params, { text: 'prompt 9: tell me about juliet' });
    await page.locator('#results-table .rt-scroll').focus();
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('#results-table .vl-row[aria-expanded="true"]'));
    await page.keyboard.press('End');
    await page.locator('#results-table .vl-row.active .c-idx', { hasText: '200' }).waitFor();
    await assertClean(p);
  });

  it('the Endpoint column shows whole host:port endpoints; a long host is cut, never the port', async () => {
    const endpointCells = (page: Page) =>
      page.locator('#results-table .vl-row:not([hidden]) .c-ep').evaluateAll((cells) =>
        cells.map((c) => {
          const box = c.getBoundingClientRect();
          const host = c.querySelector('.ep-host');
          const port = c.querySelector('.ep-port').getBoundingClientRect();
          return { text: c.textContent, hostCut: host.scrollWidth > host.clientWidth, portShown: port.width > 0 && port.left >= box.left && port.right <= box.right + 0.5 };
        }),
      ) as Promise<Array<{ text: string; hostCut: boolean; portShown: boolean }>>;
    for (const viewport of [{ width: 1280, height: 700 }, { width: 760, height: 700 }]) {
      const p = await panel('dark', viewport);
      const { page } = p;
      await host(page, { type: 'init', state: initState() });
      const endpoints = ['127.0.0.1:41231', '127.0.0.1:41232', '127.0.0.1:41233', '127.0.0.1:41234'];
      await page.evaluate(([rec, eps]) => {
        const H = (window as unknown as HostGlobal).__host;
        H.post({ type: 'showRun', record: rec, resultsJsonl: H.jsonl(H.makeRows(12, { endpoints: eps })) });
      }, [record('sim', '2026-11-02T10:20:00.000Z', { label: 'simulator' }), endpoints] as const);
      await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '12');
      const cells = await endpointCells(page);
      assert.deepEqual(cells.slice(0, 4).map((c) => c.text), endpoints);
      assert.ok(cells.every((c) => !c.hostCut && c.portShown), `every endpoint shows whole at ${viewport.width}px: ${JSON.stringify(cells.slice(0, 4))}`);
      if (viewport.width === 1280) await shot(page, 'results-endpoints');

      const long = ['gpu-node-0123.rack-x1.cluster.example.org:8000', 'gpu-node-0123.rack-x1.cluster.example.org:8001'];
      await page.evaluate(([rec, eps]) => {
        const H = (window as unknown as HostGlobal).__host;
        H.post({ type: 'showRun', record: rec, resultsJsonl: H.jsonl(H.makeRows(4, { endpoints: eps })) });
      }, [record('long', '2026-11-02T10:20:00.000Z', { label: 'long hosts' }), long] as const);
      await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '4');
      const longCells = await endpointCells(page);
      assert.deepEqual(longCells.slice(0, 2).map((c) => c.text), long, 'the cell holds the whole endpoint');
      assert.ok(longCells.every((c) => c.portShown), `the port shows even when the host is cut (${viewport.width}px)`);
      assert.equal(await page.locator('#results-table .vl-row[data-index="1"] .c-ep').getAttribute('title'), long[1]);
      await assertClean(p);
    }
  });

  it('tables hold from 400 px to wide: Prompt and Response take the free space, columns sort and resize; every tab and History\'s status and actions stay in view', async () => {
    const widths = (page: Page) =>
      // (No named functions inside evaluate: tsx would wrap them in a helper the page lacks.)
      page.locator('#results-table .rt-head').evaluate((head) =>
        Object.fromEntries([['row', head], ...['prompt', 'resp', 'ep', 'lat', 'tok', 'status'].map((c) => [c, head.querySelector(`.c-${c}`)])].map(([k, e]) => [k, e ? e.getBoundingClientRect().width : 0])),
      ) as Promise<Record<'row' | 'prompt' | 'resp' | 'ep' | 'lat' | 'tok' | 'status', number>>;
    for (const width of [400, 630, 1280, 1400]) {
      const p = await panel('dark', { width, height: 640 });
      const { page } = p;
      await host(page, { type: 'init', state: initState() });
      await page.evaluate((rec) => {
        const H = (window as unknown as HostGlobal).__host;
        H.post({ type: 'showRun', record: rec, resultsJsonl: H.jsonl(H.makeRows(60, { failEvery: 7, endpoints: ['gpu-node-0123.rack-x1.cluster.example.org:8000', 'gpu02:8000'] })) });
      }, record('wide', '2026-11-02T10:20:00.000Z', { label: 'sixty prompts' }));
      await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '60');
      const w = await widths(page);
      assert.ok(w.prompt + w.resp >= 0.6 * w.row, `${width}px: Prompt and Response keep most of the row (${JSON.stringify(w)})`);
      assert.ok(w.resp > w.ep && w.resp > w.lat, `${width}px: Response is wider than any numeric column`);
      // Every heading on show fits its column (none cut to "Late…" or "Tok…").
      const cut = await page.locator('#results-table .rt-th').evaluateAll((ths) =>
        ths.filter((th) => th.getBoundingClientRect().width > 0).filter((th) => { const t = th.querySelector('button, span'); return t && t.scrollWidth > t.clientWidth + 1; }).map((th) => th.textContent),
      );
      assert.deepEqual(cut, [], `${width}px: headings cut`);
      const tabs = await page.locator('vscode-tab-header').evaluateAll((hs) => {
        const right = Math.min(document.documentElement.clientWidth, hs[0].parentElement.getBoundingClientRect().right);
        return hs.map((h) => ({ tab: h.dataset.tab, inView: h.getBoundingClientRect().right <= right + 0.5 && h.getBoundingClientRect().width > 0, cut: h.scrollWidth > h.clientWidth + 1 }));
      });
      await shot(page, `results-${width}`);
      assert.deepEqual(tabs.filter((t) => !t.inView || t.cut), [], `${width}px: every tab shows whole`);

      // Sort by latency (slowest first after a second click), then back to input order.
      await page.locator('#results-table .rt-sort[data-sort="latency"]').click();
      await page.locator('#results-table .rt-th[aria-sort="ascending"] [data-sort="latency"]').waitFor();
      await page.locator('#results-table .rt-sort[data-sort="latency"]').click();
      await page.locator('#results-table .rt-th[aria-sort="descending"] [data-sort="latency"]').waitFor();
      const lat = await page.locator('#results-table .vl-row:not([hidden])').evaluateAll((rows) =>
        rows.map((r) => ({ y: r.getBoundingClientRect().top, ms: parseFloat(r.querySelector('.c-lat').textContent) * (/ s$/.test(r.querySelector('.c-lat').textContent) ? 1000 : 1) })).sort((a, b) => a.y - b.y).map((r) => r.ms),
      );
      assert.deepEqual(lat, [...lat].sort((a, b) => b - a), `${width}px: slowest first`);
      await page.locator('#results-table .rt-sort[data-sort=""]').click();
      await page.waitForFunction(() => document.querySelector('#results-table .vl-row:not([hidden]) .c-idx')?.textContent === '1');

      // Drag the Prompt heading's edge: Prompt narrows, Response takes the rest.
      const grip = await page.locator('#results-table .rt-th.c-prompt .rt-grip').boundingBox();
      await page.mouse.move(grip!.x + 2, grip!.y + 4);
      await page.mouse.down();
      await page.mouse.move(grip!.x + 2 - Math.round(w.prompt / 3), grip!.y + 4, { steps: 4 });
      await page.mouse.up();
      const after = await widths(page);
      assert.ok(after.prompt < w.prompt - 10 && after.resp > w.resp + 10, `${width}px: the column resized (${w.prompt} → ${after.prompt})`);

      await tab(page, 'history');
      const cells = await page.locator('#history-table tbody tr').first().evaluate((tr) => {
        const [status, rerun, csv] = ['.run-ended', 'td.actions [data-action="rerun"]', 'td.actions [data-action="export-csv"]'].map((sel) => tr.querySelector(sel).getBoundingClientRect());
        const shown = [status, rerun, csv].map((b) => b.width > 0 && b.right <= document.documentElement.clientWidth + 0.5);
        // Every column on show ends inside the panel (the last one too), none pushed past its edge.
        const cut = [...tr.querySelectorAll('td')].filter((td) => td.getBoundingClientRect().width > 0 && td.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).length;
        return { status: shown[0], actions: shown[1] && shown[2], cut, pageScrolls: document.documentElement.scrollWidth > document.documentElement.clientWidth };
      });
      await shot(page, `history-${width}`);
      assert.deepEqual(cells, { status: true, actions: true, cut: 0, pageScrolls: false }, `${width}px: History keeps status, actions and every column on show in view`);
      await assertClean(p);
    }
  });

  it('History at 1,000 px (a panel beside the editor in a 1,400 px window): every column ends inside the panel, the last one too', async () => {
    const p = await panel('dark', { width: 1000, height: 500 });
    const { page } = p;
    // As code-server showed it: a comparison on the local simulator, its context line long.
    const context = { hostfile: 'local simulator (4 endpoints)', endpoints: 4, model: 'sim-model', params: { batch: true, stream: true, tags: [] } };
    await host(page, { type: 'init', state: initState({ history: [record('wide', '2026-11-02T10:20:00.000Z', { label: '8 prompts · batched vs individual × 2', mode: 'compare', context })] }) });
    await tab(page, 'history');
    const cells = await page.locator('#history-table tbody tr').first().evaluate((tr) =>
      [...tr.querySelectorAll('td')].map((td) => ({ text: td.textContent.trim().slice(0, 20), shown: td.getBoundingClientRect().width > 0, inside: td.getBoundingClientRect().right <= document.documentElement.clientWidth + 0.5 })),
    );
    await shot(page, 'history-1000');
    assert.equal(cells.at(-1)!.shown, true, 'the last column (prompts/s) is on show at this width');
    assert.deepEqual(cells.filter((c) => c.shown && !c.inside), [], 'no column cut at the panel\'s edge');
    await assertClean(p);
  });

  it('renders 100,000 rows: scrolls to the last one with a small DOM', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    // How fast is `npm run bench`'s business (webview.bench.ts); here: it paints, and the DOM stays small.
    await page.evaluate((rec) => {
      const H = (window as unknown as HostGlobal).__host as unknown as { makeRows(n: number): ResultRow[]; jsonl(rows: ResultRow[]): string; timeUntil(m: unknown, done: () => boolean): Promise<number> };
      const rows = H.makeRows(100_000);
      return H.timeUntil({ type: 'showRun', record: rec, resultsJsonl: H.jsonl(rows) }, () =>
        document.querySelector('#results-table')?.getAttribute('data-count') === '100000' && !!document.querySelector('#results-table .vl-row[data-index="0"]'),
      );
    }, record('big', '2026-11-02T10:20:00.000Z', { label: '100k prompts' }));
    assert.ok((await visibleRows(page).count()) < 80, 'only the rows in view exist');
    await page.locator('#results-table .rt-scroll').evaluate((s) => (s.scrollTop = s.scrollHeight));
    await page.locator('#results-table .vl-row:not([hidden]) .c-idx', { hasText: '100000' }).waitFor();
    assert.ok(await page.locator('#results-table .vl-row:not([hidden])', { hasText: 'prompt 99999' }).isVisible());
    assert.ok((await page.locator('#results-table .vl-row').count()) < 120, 'rows are recycled, not added');
    assert.equal(await page.locator('#results-table').getAttribute('data-count'), '100000');
    await assertClean(p);
  });

  it('shows the reduction tree level by level', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    await host(page, started('t1', 8, 'tree-reduce of 8 items', { pattern: 'tree-reduce' }));
    const leaves = Array.from({ length: 8 }, (_, i) => `leaf answer ${i}`);
    await host(page, { type: 'runProgress', runId: 't1', done: 11, ok: 11, failed: 0, total: 11, elapsedMs: 900, resultsJsonl: jsonl([...leaves.map((t, i) => row(i, { text: t })), row(8, { level: 1, text: 'merged 0-3' }), row(9, { level: 1, text: 'merged 4-7' }), row(10, { level: 2, text: 'FINAL' })]) });
    await host(page, finished('t1', {
      pattern: 'tree-reduce',
      summary: summary({ pattern: 'tree-reduce', prompts: 11, ok: 11, failed: 0 }),
      reduce: { text: 'FINAL', levels: [{ level: 0, texts: leaves }, { level: 1, texts: ['merged 0-3', 'merged 4-7'] }, { level: 2, texts: ['FINAL'] }] },
    }));
    await page.locator('#tree').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#tree-final').textContent(), 'FINAL');
    assert.deepEqual(await page.locator('#tree section.level').evaluateAll((s) => s.map((x) => (x as HTMLElement).dataset.level)), ['2', '1', '0']);
    assert.equal(await page.locator('section.level[data-level="0"] details.node').count(), 8);
    assert.match(await page.locator('section.level[data-level="1"] h3').textContent() ?? '', /2 answers/);
    assert.equal(await page.locator('vscode-tab-header[data-tab="tree"] .tab-long').textContent(), 'Reduce tree');
    await page.locator('section.level[data-level="1"] details.node summary').first().click();
    assert.equal(await page.locator('section.level[data-level="1"] details.node[open] pre').textContent(), 'merged 0-3');
    await tab(page, 'results');
    await page.locator('#results-table .c-idx', { hasText: '11 · L2' }).waitFor();
    await shot(page, 'tree-dark-results');
    await tab(page, 'tree');
    await shot(page, 'tree-dark');
    await assertClean(p);
  });

  it('a tree-reduce with failed items: leaves keep their item numbers, the final answer says which items failed and which a failed group took with it', async () => {
    const p = await panel('dark', { width: 1000, height: 900 });
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    await host(page, started('t2', 20, 'tree-reduce of 20 items', { pattern: 'tree-reduce' }));
    const kept = Array.from({ length: 20 }, (_, i) => i).filter((i) => i !== 6 && i !== 13);
    await host(page, finished('t2', {
      pattern: 'tree-reduce',
      summary: summary({ pattern: 'tree-reduce', prompts: 26, ok: 23, failed: 3 }),
      reduce: {
        text: 'FINAL',
        levels: [
          { level: 0, texts: kept.map((i) => `leaf ${i + 1}`), names: kept.map((i) => `item ${i + 1}`) },
          { level: 1, texts: ['g1', 'g2', 'g4'], names: ['group 1', 'group 2', 'group 4'] },
          { level: 2, texts: ['FINAL'], names: ['group 1'] },
        ],
        missing: [
          { level: 0, name: 'item 7', reason: 'HTTP 500: <b>out of KV cache</b>' },
          { level: 0, name: 'item 14', reason: 'cancelled' },
          { level: 1, name: 'group 3', reason: 'HTTP 503', items: [12, 14, 15, 16, 17] },
        ],
      },
    }));
    await page.locator('#tree-missing').waitFor();
    assert.deepEqual((await page.locator('#tree-missing li').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim()), [
      'item 7: HTTP 500: <b>out of KV cache</b>',
      'item 14: cancelled',
      'group 3 (level 1): HTTP 503 — took items 13, 15, 16, 17, 18 with it',
    ]);
    assert.match((await page.locator('#tree-missing p').textContent())!.replace(/\s+/g, ' '), /Built from 13 of 20 leaves: 3 answers did not reach it/);
    const leafIds = await page.locator('section.level[data-level="0"] .node-id').allTextContents();
    assert.deepEqual(leafIds.slice(5, 8), ['item 6', 'item 8', 'item 9'], 'a failed leaf leaves a gap in the numbers');
    assert.equal(await page.locator('#tree-missing b').evaluateAll((b) => b.map((x) => x.textContent).join(',')), 'item 7,item 14,group 3', 'the server message is text');
    await shot(page, 'tree-failed-items');
    await assertClean(p);
  });

  for (const theme of ['dark', 'light', 'hc'] as const) {
    it(`compares batched and individual side by side with uPlot charts (${theme} theme)`, async () => {
      const p = await panel(theme, { width: 1280, height: 1300 });
      const { page } = p;
      await host(page, { type: 'init', state: initState() });
      await host(page, comparisonStarted('c1', 60, 'compare 60 prompts', 3));
      await host(page, { type: 'armStarted', runId: 'c1', arm: 'individual', round: 0 });
      await page.locator('#run-status .run-label', { hasText: 'compare 60 prompts · individual, round 1/3' }).waitFor();
      for (const figures of comparison(3).rounds) await host(page, { type: 'armFinished', runId: 'c1', arm: figures.arm, round: figures.round, figures, cancelled: false, error: null });
      await host(page, finished('c1', { label: 'compare 60 prompts', mode: 'compare', comparison: comparison(3) }));
      await page.locator('[data-view="compare"]').waitFor({ state: 'visible' });
      assert.match(await page.locator('#compare-of').textContent() ?? '', /Comparison of compare 60 prompts/, 'it says which run it belongs to');
      const heads = await page.locator('#compare-figures thead th').allTextContents();
      assert.deepEqual(heads.slice(1), ['batched', 'individual']);
      const wall = await page.locator('#compare-figures tr[data-figure="wall time"] td').allTextContents();
      assert.equal(wall.length, 2);
      assert.match(wall[0]!, /^\s*1\.05 s\s*1\.03 s – 1\.07 s\s*$/, `batched wall: median then min – max (${wall[0]})`);
      assert.match(wall[1]!, /\d\.\d\d s/);
      const requests = await page.locator('#compare-figures tr[data-figure="HTTP requests"] td').allTextContents();
      assert.deepEqual(requests.map((t) => t.trim()), ['3', '60']);
      assert.match(await page.locator('#template-paths').textContent() ?? '', /batched\s*\/v1\/completions.*individual\s*\/v1\/chat\/completions/s);
      assert.match(await page.locator('#verdict').textContent() ?? '', /Batched finished \d\.\d\d× faster/);
      assert.equal(await page.locator('#compare-endpoints tbody tr').count(), 3);
      await page.waitForFunction(() => document.querySelectorAll('[data-view="compare"] swarm-chart canvas').length >= 4);
      for (const chart of ['timeline-batched', 'timeline-individual', 'latency', 'load']) {
        const box = await page.locator(`swarm-chart[data-chart="${chart}"] canvas`).boundingBox();
        assert.ok(box && box.width > 200 && box.height > 50, `${chart} chart is drawn`);
      }
      assert.match(await page.locator('swarm-chart[data-chart="latency"] .u-legend').textContent() ?? '', /batched.*individual/s);
      await setSelect(page, '#timeline-round', '2');
      await page.locator('swarm-chart[data-chart="timeline-batched"][aria-label*="round 2"]').waitFor();
      // Every tab is in the DOM at once: the compose checkbox and the comparison view must not share an id.
      assert.deepEqual(await duplicateIds(page), [], 'ids are unique');
      assert.equal(await page.locator('#compare-toggle').evaluate((e) => e.tagName), 'VSCODE-CHECKBOX');
      await shot(page, `compare-${theme}`);
      await assertClean(p);
    });
  }

  it('a comparison over 1,000 endpoints: the timeline is a density, the load sorted, the endpoint table the ones that failed most', async () => {
    const p = await panel('dark', { width: 1280, height: 1200 });
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    const big = comparison(2, 4000, 1000);
    for (const r of big.rounds) if (r.arm === 'batched') r.summary.endpoints[417]!.failed = 4; // one flaky node
    // Uneven load in the individual arm (2 to 6 prompts an endpoint), and one endpoint that took 12.
    for (const r of big.rounds) if (r.arm === 'individual') r.summary.endpoints.forEach((e, k) => (e.prompts = k === 9 ? 12 : 2 + ((k * 7) % 5)));
    await host(page, comparisonStarted('c1000', 4000, '4,000 prompts on 1,000 endpoints', 2));
    for (const figures of big.rounds) await host(page, { type: 'armFinished', runId: 'c1000', arm: figures.arm, round: figures.round, figures, cancelled: false, error: null });
    await host(page, finished('c1000', { label: '4,000 prompts on 1,000 endpoints', mode: 'compare', comparison: big }));
    await page.locator('[data-view="compare"]').waitFor({ state: 'visible' });
    await page.waitForFunction(() => document.querySelectorAll('[data-view="compare"] swarm-chart canvas').length >= 4);
    for (const chart of ['timeline-batched', 'timeline-individual', 'load']) {
      const box = await page.locator(`swarm-chart[data-chart="${chart}"] canvas`).boundingBox();
      assert.ok(box && box.height < 300, `${chart}: ${box?.height} px high for 1,000 endpoints`);
    }
    assert.match(await page.locator('swarm-chart[data-chart="timeline-batched"]').getAttribute('aria-label') ?? '', /in flight over time/);
    // The load: how many endpoints answered how many prompts (not 1,000 bars in a block), each arm's spread and its most loaded, named.
    assert.match(await page.locator('swarm-chart[data-chart="load"]').getAttribute('aria-label') ?? '', /Endpoints by prompts answered, for each arm: 1000 endpoints/);
    const loadLines = (await page.locator('#load-summary li').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
    assert.equal(loadLines.length, 2);
    assert.equal(loadLines[0], 'batched: 1,000 endpoints, 4 prompts each', 'an even load says so');
    assert.match(loadLines[1]!, /^individual: 1,000 endpoints, 2 – 12 prompts each \(median 4\); most: gpu10:8000 \(12\), gpu\d+:8000 \(6\), gpu\d+:8000 \(6\)$/);
    assert.equal(await page.locator('#compare-endpoints tbody tr').count(), 12, 'the endpoint table lists a few');
    assert.equal(await page.locator('#compare-endpoints tbody tr').first().getAttribute('data-endpoint'), 'gpu418:8000', 'the failing one first');
    await shot(page, 'compare-1000');
    await page.locator('#load-summary').scrollIntoViewIfNeeded();
    await shot(page, 'compare-1000-load');
    await page.locator('#all-endpoints').click();
    await page.waitForFunction(() => document.querySelectorAll('#compare-endpoints tbody tr').length === 1000);
    await assertClean(p);
  });

  it('a comparison is one run from runStarted to runFinished: its arms come and go, the timeline round stays; an arm that lost prompts never wins without saying so', async () => {
    const p = await panel('dark', { width: 1280, height: 1100 });
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    await page.locator('#add-prompt').click();
    await page.locator('#prompt-editor textarea').fill('a prompt to run');
    await page.locator('#run:not([disabled])').waitFor();
    const full = comparison(2, 6); // rounds in the order the arms ran: batched 0, individual 0, individual 1, batched 1
    const disabled = (id: string) => page.locator(id).evaluate((b) => (b as HTMLElement & { disabled: boolean }).disabled);
    const runState = () => page.locator('#run-status').getAttribute('data-state');
    await host(page, comparisonStarted('cmp-1', 6, 'compare 6 prompts', 2));
    /** One arm as the host sends it: armStarted, progress, armFinished with its figures. */
    const arm = async (i: number) => {
      const figures = full.rounds[i]!;
      await host(page, { type: 'armStarted', runId: 'cmp-1', arm: figures.arm, round: figures.round });
      await host(page, { type: 'runProgress', runId: 'cmp-1', done: 6, ok: 6, failed: 0, total: 6, elapsedMs: 500, resultsJsonl: jsonl(Array.from({ length: 6 }, (_, k) => row(k))) });
      await host(page, { type: 'armFinished', runId: 'cmp-1', arm: figures.arm, round: figures.round, figures, cancelled: false, error: null });
      // The panel has taken the arm in (its wall time column counts this round) and painted it.
      await page.waitForFunction(
        ([col, n]) => {
          const td = document.querySelectorAll('#compare-figures tr[data-figure="wall time"] td')[col];
          return n === 1 ? Boolean(td) && td.textContent.trim() !== '—' : Boolean(td?.querySelector(`.spread[title="min – max over ${n} rounds"]`));
        },
        [figures.arm === 'batched' ? 0 : 1, figures.round + 1] as const,
      );
      await painted(page);
      assert.equal(await runState(), 'running', `after the ${figures.arm} arm of round ${figures.round + 1}, the comparison still runs`);
      assert.equal(await disabled('#run'), true, 'Run waits for the whole comparison');
      assert.equal(await disabled('#cancel'), false, 'the comparison can be cancelled between arms');
    };
    await arm(0);
    await page.locator('[data-view="compare"]').waitFor({ state: 'visible' });
    await arm(1);
    await arm(2);
    await setSelect(page, '#timeline-round', '2');
    await page.locator('swarm-chart[data-chart="timeline-individual"][aria-label*="round 2"]').waitFor();
    await tab(page, 'results');
    await arm(3);
    assert.equal(await page.locator('vscode-tab-header[data-tab="results"]').getAttribute('aria-selected'), 'true', 'a later arm does not pull the Comparison tab forward again');
    await host(page, finished('cmp-1', { label: 'compare 6 prompts', mode: 'compare', comparison: full }));
    await page.locator('#run-status[data-state="done"]').waitFor();
    await page.locator('#run:not([disabled])').waitFor();
    assert.equal(await disabled('#cancel'), true, 'nothing left to cancel');
    await tab(page, 'compare');
    assert.equal(await page.locator('#timeline-round').evaluate((s) => (s as HTMLElement & { value: string }).value), '2', 'the chosen round stayed');
    await page.waitForFunction(() => document.querySelectorAll('[data-view="compare"] swarm-chart canvas').length >= 4);
    await shot(page, 'compare-finished');

    // A flaky endpoint: batched lost 2 of 6 prompts every round. The header, the run bar and the verdict say so.
    const flaky = comparison(2, 6);
    for (const r of flaky.rounds) Object.assign(r.summary, r.arm === 'batched' ? { ok: 4, failed: 2, wallMs: 500 } : { wallMs: 1500 });
    for (const r of flaky.rounds) if (r.arm === 'batched') r.summary.endpoints = r.summary.endpoints.map((e, i) => (i === 1 ? { ...e, ok: e.ok - 2, failed: 2 } : e));
    // Its request to gpu02 failed whole (the core's RequestSpan counts a request's failed prompts).
    for (const r of flaky.rounds) if (r.arm === 'batched') r.requests = r.requests.map((q) => (q.endpoint === 'gpu02:8000' ? { ...q, failed: 2, error: 'HTTP 500: <b>overloaded</b>' } : q));
    await host(page, comparisonStarted('cmp-2', 6, 'compare with a flaky endpoint', 2));
    await page.locator('#compare-of', { hasText: 'compare with a flaky endpoint' }).waitFor({ state: 'attached' });
    assert.equal(await page.locator('#timeline-round').count(), 0, 'a new comparison starts from its own rounds');
    for (const figures of flaky.rounds) {
      await host(page, { type: 'armStarted', runId: 'cmp-2', arm: figures.arm, round: figures.round });
      await host(page, { type: 'armFinished', runId: 'cmp-2', arm: figures.arm, round: figures.round, figures, cancelled: false, error: null });
    }
    await host(page, finished('cmp-2', { label: 'compare with a flaky endpoint', mode: 'compare', comparison: flaky }));
    await page.locator('#run-status[data-state="done"]').waitFor();
    assert.match((await page.locator('#run-status .counts').textContent())!.replace(/\s+/g, ' '), /2 rounds per arm · batched: 4 of 12 prompts failed · individual: all answered/);
    await tab(page, 'compare');
    assert.match((await page.locator('#arm-losses li[data-arm="batched"]').textContent())!.replace(/\s+/g, ' '), /batched: 2 rounds · 4 of 12 prompts failed/);
    assert.match(await page.locator('#verdict').textContent() ?? '', /Batched finished .* faster .* but it lost prompts \(4 of 12 prompts failed\)/);
    assert.equal(await page.locator('#compare-figures tr[data-figure="wall time"] td.best').count(), 0, 'no speed winner that lost prompts');
    assert.match(await page.locator('swarm-chart[data-chart="timeline-batched"]').getAttribute('aria-label') ?? '', /2 prompts failed/, 'the timeline says its arm lost prompts');
    assert.equal(await page.locator('#compare-figures tr[data-figure="prompts failed"] td.best.arm-individual, #compare-figures tr[data-figure="prompts failed"] td.best').count(), 1);
    await shot(page, 'compare-failures');
    // The failed request is drawn hatched red, with a legend; hovering it says how it ended, as text.
    assert.deepEqual((await page.locator('#timeline-legend li').allTextContents()).map((t) => t.trim()), ['batched request', 'individual request', 'failed request (1 in this round)']);
    const chart = page.locator('swarm-chart[data-chart="timeline-batched"]');
    await chart.scrollIntoViewIfNeeded();
    const over = (await chart.locator('.u-over').boundingBox())!;
    const xMax = Math.max(...flaky.rounds.filter((r) => r.round === 0).flatMap((r) => r.requests.map((q) => q.doneMs)));
    const bar = flaky.rounds[0]!.requests.find((q) => q.endpoint === 'gpu02:8000')!;
    await page.mouse.move(over.x + (over.width * (bar.sentMs + bar.doneMs)) / 2 / xMax, over.y + over.height / 2);
    const tip = chart.locator('.chart-tip:not([hidden])');
    await tip.waitFor();
    assert.equal(await tip.textContent(), 'gpu02:8000 · 6.0 ms → 960 ms (954 ms) · 2 prompts · failed: HTTP 500: <b>overloaded</b>');
    assert.equal(await tip.locator('b').count(), 0, 'the error is text');
    await shot(page, 'compare-failed-request-tooltip');
    await page.mouse.move(over.x + 2, over.y + over.height - 2);
    await chart.locator('.chart-tip[hidden]').waitFor({ state: 'attached' });

    // Cancelled between arms: the run ends with its record, cancelled, and says so.
    await host(page, comparisonStarted('cmp-3', 6, 'compare again', 2));
    await host(page, { type: 'armStarted', runId: 'cmp-3', arm: 'batched', round: 0 });
    await host(page, { type: 'armFinished', runId: 'cmp-3', arm: 'batched', round: 0, figures: full.rounds[0]!, cancelled: false, error: null });
    await host(page, { type: 'armStarted', runId: 'cmp-3', arm: 'individual', round: 0 });
    await host(page, { type: 'armFinished', runId: 'cmp-3', arm: 'individual', round: 0, figures: null, cancelled: true, error: null });
    await page.locator('.notice', { hasText: 'Comparison cancelled' }).waitFor();
    assert.equal(await runState(), 'running', 'until its record is saved');
    await host(page, finished('cmp-3', { label: 'compare again', mode: 'compare', cancelled: true, comparison: { ...full, rounds: full.rounds.slice(0, 1) } }));
    await page.locator('#run-status[data-state="cancelled"]').waitFor();
    await page.locator('#run:not([disabled])').waitFor();
    await assertClean(p);
  });

  it('after a comparison the table holds the arm and round its header and figures name (the batched median round), a switch shows the other arm; "request sent" is that arm\'s request', async () => {
    const p = await panel('dark', { width: 1100, height: 900 });
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    const full = comparison(3, 4, 2);
    for (const r of full.rounds) r.cacheSalt = `salt-r${r.round}-${r.arm}`;
    // The batched arm's median round is round 1 (index 3 in run order: b0 i0 i1 b1 b2 i2).
    full.rounds[3]!.summary = { ...full.rounds[3]!.summary, httpRequests: 2, generationRequests: 2, requestsByPath: { '/v1/completions': 2 } };
    // The individual arm's round 1 (index 2), its median: prompt 3 failed, prompt 2 answered otherwise. Its figures say so as its rows do.
    full.rounds[2]!.summary = { ...full.rounds[2]!.summary, ok: 3, failed: 1 };
    const rowsOf = (arm: 'batched' | 'individual', round: number) =>
      Array.from({ length: 4 }, (_, i) =>
        row(i, { endpoint: `gpu0${(i % 2) + 1}:8000`, completionTokens: arm === 'batched' ? 100 + round * 10 + i : 27 + i * 16, timings: { queuedMs: 1, sentMs: arm === 'batched' ? 5 : 5 + i * 30, firstByteMs: null, firstTokenMs: null, doneMs: 200 + i } }),
      ).map((r) =>
        arm === 'batched' || round !== 1 ? r : r.index === 2 ? { ...r, text: 'another answer 2' } : r.index === 3 ? { ...r, status: 'failed' as const, ok: false, text: '', error: 'HTTP 500: boom' } : r,
      );
    await host(page, comparisonStarted('cmp-t', 4, 'compare 4 prompts', 3));
    for (const figures of full.rounds) {
      await host(page, { type: 'armStarted', runId: 'cmp-t', arm: figures.arm, round: figures.round });
      await host(page, { type: 'runProgress', runId: 'cmp-t', done: 4, ok: 4, failed: 0, total: 4, elapsedMs: 300, resultsJsonl: jsonl(rowsOf(figures.arm, figures.round)) });
      await host(page, { type: 'armFinished', runId: 'cmp-t', arm: figures.arm, round: figures.round, figures, cancelled: false, error: null });
    }
    await tab(page, 'results');
    // Live, the table is the arm going, and says so.
    await page.locator('#arm-header[data-arm="individual"][data-round="2"]').waitFor();
    assert.match((await page.locator('#arm-header').textContent())!.replace(/\s+/g, ' '), /Rows of the individual arm, round 3 of 3 · live/);
    await cellsAre(page, 'tok', ['27', '43', '59', '75']);
    const kept = { ...full, kept: { batched: 1, individual: 1 } };
    const record = { label: 'compare 4 prompts', mode: 'compare' as const, summary: full.rounds[3]!.summary };
    await host(page, finished('cmp-t', { ...record, comparison: kept, rows: { arm: { arm: 'batched', round: 1 }, resultsJsonl: jsonl(rowsOf('batched', 1)) } }));
    await page.locator('#arm-header[data-arm="batched"][data-round="1"]').waitFor();
    assert.match((await page.locator('#arm-header .arm-title').textContent())!.replace(/\s+/g, ' '), /Rows of the batched arm, round 2 of 3 \(its median round\)/);
    await cellsAre(page, 'tok', ['110', '111', '112', '113'], 'the batched median round\'s rows, not the last individual round\'s');
    assert.match((await page.locator('#run-figures').textContent())!.replace(/\s+/g, ' '), /HTTP requests\s*2/);
    const sentText = async (i: number) => {
      const rowEl = visibleRows(page).nth(i);
      await rowEl.click();
      const open = page.locator('#results-table .vl-row[aria-expanded="true"]');
      await open.locator('.vl-sent > summary').click();
      const text = (await open.locator('.vl-sent pre').textContent())!;
      await rowEl.click();
      return text;
    };
    const batchedSent = await sentText(0);
    assert.match(batchedSent, /^POST http:\/\/gpu01:8000\/v1\/completions\n/);
    assert.match(batchedSent, /item 1 of 2 in the request's "prompt" list/);
    assert.match(batchedSent, /cache_salt: salt-r1-batched/);
    await shot(page, 'compare-table-batched');
    // The other arm: its kept round's rows from the host (openRun with the arm), its figures, its requests.
    await clearSent(page);
    await page.locator('#arm-switch input[value="individual"]').check();
    const asked = await answer(page, 'openRun', { record: { ...record, id: 'cmp-t', startedAt: '2026-11-02T11:00:00.000Z', pattern: 'scatter', file: 'cmp-t.jsonl' }, resultsJsonl: jsonl(rowsOf('individual', 1)), comparison: kept, arm: { arm: 'individual', round: 1 } });
    assert.deepEqual(asked.params, { id: 'cmp-t', arm: 'individual' });
    await page.locator('#arm-header[data-arm="individual"][data-round="1"]').waitFor();
    await cellsAre(page, 'tok', ['27', '43', '59', '75']);
    assert.match((await page.locator('#run-figures').textContent())!.replace(/\s+/g, ' '), /HTTP requests\s*4/, 'the individual round\'s figures');
    const individualSent = await sentText(1);
    assert.match(individualSent, /^POST http:\/\/gpu02:8000\/v1\/chat\/completions\n/);
    assert.match(individualSent, /cache_salt: salt-r1-individual/);
    assert.equal(await page.locator('vscode-tab-header[data-tab="results"]').getAttribute('aria-selected'), 'true', 'the switch stays on Results');
    await shot(page, 'compare-table-individual');

    // Both arms prompt by prompt (promptfoo's providers side by side): each arm's kept round from the host (openRun per arm).
    await clearSent(page);
    await page.locator('#arm-switch input[value="both"]').check();
    await page.waitForFunction(() => (window as unknown as HostGlobal).__host.sent.filter((m: PanelMessage) => m.type === 'request' && m.method === 'openRun').length === 2);
    const opens = (await sentMessages(page)).filter((m): m is Extract<PanelMessage, { type: 'request'; method: 'openRun' }> => m.type === 'request' && m.method === 'openRun');
    assert.deepEqual(opens.map((m) => m.params.arm).sort(), ['batched', 'individual']);
    const savedRecord = { ...record, id: 'cmp-t', startedAt: '2026-11-02T11:00:00.000Z', pattern: 'scatter' as const, file: 'cmp-t.jsonl' };
    for (const m of opens) {
      const arm = m.params.arm!;
      await host(page, { type: 'reply', requestId: m.requestId, ok: true, value: { record: savedRecord, resultsJsonl: jsonl(rowsOf(arm, 1)), comparison: kept, arm: { arm, round: 1 } } });
    }
    await page.locator('#arm-header[data-arm="both"]').waitFor();
    assert.match((await page.locator('#arm-header .arm-title').textContent())!.replace(/\s+/g, ' '), /Both arms, prompt by prompt: batched round 2, individual round 2/);
    const armsTable = page.locator('#arms-table');
    await page.waitForFunction(() => document.querySelector('#arms-table')?.getAttribute('data-count') === '4');
    const armRows = () =>
      armsTable.locator('.vl-row:not([hidden])').evaluateAll((rows) =>
        rows
          .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
          .map((r) => Array.from<Element>(r.querySelector('.at-cells')!.children).map((c) => c.textContent!.trim()).join(' | ')),
      );
    assert.deepEqual(await armRows(), [
      '1 | prompt 0 | answer 0 | 195 ms | answer 0 | 195 ms',
      '2 | prompt 1 | answer 1 | 196 ms | answer 1 | 166 ms',
      '3 | prompt 2 | answer 2 | 197 ms | another answer 2 | 137 ms',
      '4 | prompt 3 | answer 3 | 198 ms | HTTP 500: boom | 108 ms',
    ]);
    assert.equal((await page.locator('#side-by-side-count').textContent())!.trim(), '1 of 4 prompts answered differently', 'a failed answer is not a different one');
    // The run bar counts each arm's losses over its rounds from the same figures: the failed row above is one of them.
    assert.match((await page.locator('#run-status .counts').textContent())!.replace(/\s+/g, ' '), /3 rounds per arm · batched: all answered · individual: 1 of 12 prompts failed/);
    assert.equal(await armsTable.locator('.vl-row.differ').count(), 1);
    await shot(page, 'compare-side-by-side');
    // Open a row: the prompt and both answers in full.
    await armsTable.locator('.vl-row[data-prompt="3"]').click();
    const open = armsTable.locator('.vl-row[aria-expanded="true"]');
    await open.locator('.at-both').waitFor();
    assert.deepEqual(await open.locator('.at-both .vl-label').allTextContents(), ['batched · ok', 'individual · failed']);
    assert.deepEqual(await open.locator('.at-both .vl-meta').allTextContents(), ['198 ms · gpu02:8000', '108 ms · gpu02:8000']);
    assert.deepEqual(await open.locator('.at-both pre').allTextContents(), ['answer 3', 'HTTP 500: boom']);
    await page.locator('#only-differing').click();
    await page.waitForFunction(() => document.querySelector('#arms-table')?.getAttribute('data-count') === '1');
    assert.match((await page.locator('#side-by-side-count').textContent())!, /1 shown/);
    await page.setViewportSize({ width: 400, height: 800 });
    await page.locator('#only-differing').click();
    await page.waitForFunction(() => document.querySelector('#arms-table')?.getAttribute('data-count') === '4');
    assert.equal(await armsTable.locator('.at-head .c-prompt').isVisible(), false, 'at 400 px the prompt column gives way to the answers');
    await shot(page, 'compare-side-by-side-400');
    // Back to one arm.
    await clearSent(page);
    await page.locator('#arm-switch input[value="batched"]').check();
    await answer(page, 'openRun', { record: savedRecord, resultsJsonl: jsonl(rowsOf('batched', 1)), comparison: kept, arm: { arm: 'batched', round: 1 } });
    await page.locator('#arm-header[data-arm="batched"]').waitFor();
    await page.locator('#results-table').waitFor();
    await assertClean(p);
  });

  it('history: reopens, reruns, exports and compares two runs with per-prompt differences', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    await tab(page, 'history');
    const run2 = page.locator('#history-table tr[data-run="run-2"]');
    await run2.locator('[data-action="open"]').click();
    const open = await answer(page, 'openRun', { record: HISTORY[1]!, resultsJsonl: jsonl([row(0), row(1), row(2)]) });
    assert.deepEqual(open.params, { id: 'run-2' });
    await page.locator('#results-table').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#results-table').getAttribute('data-count'), '3');
    assert.match(await page.locator('#run-status').textContent() ?? '', /questions\.prompts\.jsonl · 120 prompts/);

    // A comparison reopens on its figures and charts.
    await tab(page, 'history');
    await page.locator('#history-table tr[data-run="run-3"] [data-action="open"]').click();
    await answer(page, 'openRun', { record: { ...HISTORY[0]!, mode: 'compare' }, resultsJsonl: jsonl([row(0), row(1)]), comparison: comparison(2) });
    await page.locator('[data-view="compare"]').waitFor({ state: 'visible' });
    await page.waitForFunction(() => document.querySelectorAll('[data-view="compare"] swarm-chart canvas').length >= 4);

    await tab(page, 'history');
    await clearSent(page);
    await run2.locator('[data-action="rerun"]').click();
    assert.deepEqual((await nextSent(page, 'request', 'rerun')).params, { id: 'run-2' });
    // run-2 lost 2 prompts; the tree-reduce run-1 is no prompt-per-row run: nothing to continue.
    await run2.locator('[data-action="continue-failed"][aria-label="Rerun failed (2)"]').click();
    assert.deepEqual((await nextSent(page, 'request', 'continueRun')).params, { id: 'run-2', only: 'failed' });
    assert.equal(await page.locator('#history-table tr[data-run="run-1"] [data-action^="continue-"]').count(), 0);
    await run2.locator('[data-action="export-csv"]').click();
    const exported = await answer(page, 'exportRun', '/work/exp/run-2.csv');
    assert.deepEqual(exported.params, { id: 'run-2', format: 'csv' });
    await page.locator('.notice', { hasText: 'Exported to /work/exp/run-2.csv' }).waitFor();

    assert.equal(await page.locator('#compare-runs').evaluate((b) => (b as HTMLElement & { disabled: boolean }).disabled), true);
    await page.locator('#history-table tr[data-run="run-3"] vscode-checkbox').click();
    await run2.locator('vscode-checkbox').click();
    await page.locator('#compare-runs').click();
    const cmp = await answer(page, 'compareRuns', {
      a: HISTORY[1], b: HISTORY[0],
      changed: [{ index: 4, a: 'The sky is blue because of Rayleigh scattering.', b: 'The sky looks blue because of Rayleigh scattering of sunlight.' }],
      unanswered: 9645,
    });
    assert.deepEqual(cmp.params, { a: 'run-2', b: 'run-3' }, 'A is the older run');
    await page.locator('#runs-compare').waitFor();
    assert.match(await page.locator('#runs-figures tr[data-figure="wall time"]').textContent() ?? '', /2\.40 s\s*5\.20 s\s*\+117%/);
    assert.match(await page.locator('#changed-count').textContent() ?? '', /1 prompt answered differently/);
    assert.match(await page.locator('#unanswered-count').textContent() ?? '', /9,645 prompts were not answered in both runs \(cancelled or missing in one\): not compared/);
    assert.equal(await page.locator('.change .diff').textContent(), 'The sky islooks blue because of Rayleigh scattering of sunlight.');
    assert.deepEqual((await page.locator('.change .diff ins').allTextContents())[0], 'looks');
    assert.deepEqual((await page.locator('.change .diff del').allTextContents())[0], 'is');
    await shot(page, 'history-dark');
    await assertClean(p);
  });

  it('keeps its state across a reload (webview serializer)', async () => {
    const p = await panel();
    const { page } = p;
    await host(page, { type: 'init', state: initState() });
    await page.locator('#add-prompt').click();
    await page.locator('#prompt-editor textarea').fill('kept across reloads');
    await host(page, { type: 'showRun', record: HISTORY[1]!, resultsJsonl: jsonl([row(0), row(1, { status: 'failed', ok: false, text: '', error: 'E' })]) });
    await page.locator('#results-table').waitFor({ state: 'visible' });
    await setSelect(page, '#filter-mode', 'failures');
    await page.waitForFunction(() => document.querySelector('#results-table')?.getAttribute('data-count') === '1');
    await page.waitForFunction(() => ((window as unknown as HostGlobal).__host.state as { filter?: { mode: string } } | undefined)?.filter?.mode === 'failures');
    await page.reload();
    await page.waitForFunction(() => (window as unknown as HostGlobal).__host.sent.some((m) => m.type === 'ready'));
    await page.locator('#results-table').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#results-table').getAttribute('data-count'), '1', 'the run and its filter came back');
    await host(page, { type: 'init', state: initState() });
    await tab(page, 'compose');
    assert.equal(await page.locator('#prompt-list').getAttribute('data-count'), '1');
    await assertClean(p);
  });

  it('after a reload, a snapshot of a run that has finished since is reopened from its record (openRun); a live run is resynced, not asked for; a reopen overtaken by a live run is dropped', async () => {
    const p = await panel();
    const { page } = p;
    const savedRunId = () => page.evaluate(() => ((window as unknown as HostGlobal).__host.state as { saved?: { view: { id: string } } } | undefined)?.saved?.view.id ?? null);
    const reload = async () => {
      await page.reload();
      await page.waitForFunction(() => (window as unknown as HostGlobal).__host.sent.some((m) => m.type === 'ready'));
    };
    const openRuns = async () => (await sentMessages(page)).filter((m) => m.type === 'request' && m.method === 'openRun').map((m) => (m as { params: { id: string } }).params.id);
    /** Until the state the panel saved (300 ms after a change) holds the run on show as `want` says. */
    type Want = { id: string; rounds?: number; rows?: number; done?: number };
    const kept = (want: Want) =>
      page.waitForFunction((w: Want) => {
        const s = ((window as unknown as HostGlobal).__host.state as { saved?: { view: { id: string; done: number }; rows: unknown[] | null; comparison: { view: { rounds: unknown[] } } | null } } | undefined)?.saved;
        return s?.view.id === w.id && (w.rounds === undefined || s.comparison?.view.rounds.length === w.rounds) && (w.rows === undefined || s.rows?.length === w.rows) && (w.done === undefined || s.view.done === w.done);
      }, want);
    await host(page, { type: 'init', state: initState() });
    // Saved between a comparison's arms: one round of two.
    const full = comparison(2, 6);
    await host(page, comparisonStarted('cmp-r', 6, 'compare 6 prompts', 2));
    await host(page, { type: 'armStarted', runId: 'cmp-r', arm: 'batched', round: 0 });
    await host(page, { type: 'runProgress', runId: 'cmp-r', done: 3, ok: 3, failed: 0, total: 6, elapsedMs: 300, resultsJsonl: jsonl([row(0), row(1), row(2)]) });
    await host(page, { type: 'armFinished', runId: 'cmp-r', arm: 'batched', round: 0, figures: full.rounds[0]!, cancelled: false, error: null });
    await kept({ id: 'cmp-r', rounds: 1 });

    // It finished while the page was gone: history has its record.
    await reload();
    assert.equal(await savedRunId(), 'cmp-r', 'the snapshot came back');
    assert.notEqual(await page.locator('#run-status').getAttribute('data-state'), 'running', 'a snapshot never shows as running');
    const rec = record('cmp-r', '2026-11-02T11:00:00.000Z', { label: 'compare 6 prompts', mode: 'compare', summary: full.rounds[0]!.summary });
    await host(page, { type: 'init', state: initState({ history: [rec, ...HISTORY] }) });
    const req = await answer(page, 'openRun', { record: rec, resultsJsonl: jsonl(Array.from({ length: 6 }, (_, k) => row(k))), comparison: full });
    assert.deepEqual(req.params, { id: 'cmp-r' }, 'the finished record is asked for');
    await page.locator('#run-status[data-state="done"] .run-label', { hasText: /^compare 6 prompts$/ }).waitFor();
    await tab(page, 'compare');
    assert.match(await page.locator('[data-view="compare"] .lead').textContent() ?? '', /2 rounds per arm/, 'the whole comparison, not the snapshot\'s one round');

    // Now the state holds the whole finished run: a reload asks for nothing.
    await kept({ id: 'cmp-r', rows: 6, rounds: 4 });
    await clearSent(page);
    await reload();
    await host(page, { type: 'init', state: initState({ history: [rec, ...HISTORY] }) });
    await page.locator('[data-view="compare"]').waitFor({ state: 'visible' });
    // init is handled (the header counts its endpoints): a reopen would have been asked for by now.
    await page.locator('.conn[data-state="on"]', { hasText: '4 endpoints' }).waitFor();
    assert.deepEqual(await openRuns(), [], 'a whole finished run is shown from the state');

    // A run still going is not in history: the host resyncs it, nothing is asked for.
    await host(page, started('live-2', 4, 'still going'));
    await host(page, { type: 'runProgress', runId: 'live-2', done: 1, ok: 1, failed: 0, total: 4, elapsedMs: 100, resultsJsonl: jsonl([row(0)]) });
    await page.waitForFunction(() => document.querySelector('#progress-done')?.textContent === '1');
    await kept({ id: 'live-2', done: 1 });
    await reload();
    await host(page, { type: 'init', state: initState() });
    await host(page, started('live-2', 4, 'still going'));
    await page.locator('#run-status[data-state="running"]').waitFor(); // after init: a reopen would have been asked for by now
    assert.deepEqual(await openRuns(), []);

    // It finishes while the page is gone; back, the panel asks for it; a live run starts before the answer: the live run stays.
    await reload();
    const live2 = record('live-2', '2026-11-02T11:20:00.000Z', { label: 'still going' });
    await host(page, { type: 'init', state: initState({ history: [live2, ...HISTORY] }) });
    const stale = await nextSent(page, 'request', 'openRun');
    await host(page, started('live-3', 8, 'the next run'));
    await host(page, { type: 'reply', requestId: stale.requestId, ok: true, value: { record: live2, resultsJsonl: jsonl([row(0)]) } });
    // Messages are handled in order: once the live run's progress shows, the reply has been handled too.
    await host(page, { type: 'runProgress', runId: 'live-3', done: 1, ok: 1, failed: 0, total: 8, elapsedMs: 10, resultsJsonl: jsonl([row(0)]) });
    await page.waitForFunction(() => document.querySelector('#progress-done')?.textContent === '1');
    assert.equal(await page.locator('#run-status').getAttribute('data-state'), 'running');
    assert.match(await page.locator('#run-status .run-label').textContent() ?? '', /the next run/);
    await assertClean(p);
  });

  it('shows prompts and model output full of HTML and script payloads as text; nothing runs', async () => {
    const PAYLOADS = [
      `<img src=x onerror="window.__pwned='img'">`,
      `<script>window.__pwned='script'</script>`,
      `<a href="javascript:window.__pwned='link'">click me</a>`,
      `"><svg onload="window.__pwned='svg'"></svg>`,
      `<iframe srcdoc="<script>parent.__pwned='iframe'</script>"></iframe>`,
      `<style>body{display:none}</style><b>bold?</b>`,
      '${window.__pwned="template"} {{constructor.constructor("window.__pwned=1")()}}',
    ];
    const evil = PAYLOADS.join(' ');
    const p = await panel();
    const { page } = p;
    const evilEndpoints = [{ id: `<img src=x onerror="window.__pwned='ep'">:8000`, status: '<b>healthy</b>' as 'up', model: '<script>x()</script>', tags: { '<i>k</i>': '<img src=y onerror=alert(1)>' } }];
    await host(page, {
      type: 'init',
      state: initState({ endpoints: evilEndpoints, source: `<img src=z onerror="window.__pwned='src'">`, history: [record('evil', '2026-11-02T10:20:00.000Z', { label: PAYLOADS[0]!, file: PAYLOADS[1]! })] }),
    });
    await page.locator('#import').click();
    await answer(page, 'importFile', { name: `${PAYLOADS[3]}.jsonl`, text: PAYLOADS.map((x) => JSON.stringify({ prompt: x, [PAYLOADS[0]!]: PAYLOADS[2] })).join('\n') });
    await page.locator('#import-replace').click();
    await page.locator('#prompt-list .vl-row[data-index="0"]').click();
    await page.getByText(PAYLOADS[2]!, { exact: true }).first().waitFor();

    // A comparison whose paths, endpoints and label are payloads (the run after it keeps it, labelled).
    const comp = comparison(1, 6);
    comp.templatePaths = { batched: PAYLOADS[0]!, individual: PAYLOADS[3]! };
    for (const r of comp.rounds) r.summary.endpoints[0]!.endpoint = PAYLOADS[2]!;
    await host(page, { type: 'showRun', record: record('evil-cmp', '2026-11-02T10:10:00.000Z', { label: PAYLOADS[6]!, mode: 'compare' }), resultsJsonl: '', comparison: comp });
    await page.locator('[data-view="compare"]').waitFor({ state: 'visible' });

    await host(page, started('x', PAYLOADS.length, PAYLOADS[4]!));
    await host(page, {
      type: 'runProgress', runId: 'x', done: 7, ok: 6, failed: 1, total: 7, elapsedMs: 10,
      resultsJsonl: jsonl(PAYLOADS.map((x, i) => row(i, { prompt: x, text: evil, endpoint: evilEndpoints[0]!.id, ...(i === 1 ? { status: 'failed' as const, ok: false, error: x } : {}), input: { [x]: x } }))),
    });
    await host(page, finished('x', { summary: summary({ model: PAYLOADS[1]!, mode: PAYLOADS[0] as 'batched' }), error: PAYLOADS[5]!, reduce: { text: evil, levels: [{ level: 0, texts: PAYLOADS }] } }));
    await page.locator('.notice', { hasText: `Run failed: ${PAYLOADS[5]}` }).waitFor();
    await tab(page, 'results');
    await page.locator('#results-table .vl-row[data-index="0"]').click();
    await page.locator('#results-table .vl-row[aria-expanded="true"]').waitFor();
    await tab(page, 'compare');
    await page.locator('#compare-of').waitFor({ state: 'visible' });
    await tab(page, 'history');
    await page.locator('#history-table tr[data-run="evil"]').waitFor();
    await page.locator('#history-table tr[data-run="evil"] [data-action="export-jsonl"]').click();
    await answer(page, 'exportRun', PAYLOADS[1]);
    await page.locator('.notice', { hasText: `Exported to ${PAYLOADS[1]}` }).waitFor();
    await tab(page, 'tree');
    await page.locator('#tree details.node summary').first().click();
    await tab(page, 'results');
    await page.locator('#results-table .vl-row[aria-expanded="true"]').waitFor();
    await painted(page);

    const verdict = await page.evaluate(() => {
      const all: Element[] = [];
      const roots: Array<Document | ShadowRoot> = [document];
      while (roots.length) {
        for (const el of Array.from<Element>(roots.pop()!.querySelectorAll('*'))) {
          all.push(el);
          if (el.shadowRoot) roots.push(el.shadowRoot);
        }
      }
      return {
        pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? null,
        forbidden: all.filter((e) => ['IMG', 'IFRAME', 'OBJECT', 'EMBED', 'A', 'I'].includes(e.tagName)).map((e) => e.outerHTML.slice(0, 80)),
        handlers: all.filter((e) => Array.from<{ name: string }>(e.attributes).some((a) => /^on/i.test(a.name) || a.name === 'srcdoc')).map((e) => e.outerHTML.slice(0, 80)),
        scripts: document.querySelectorAll('script').length,
        styles: document.querySelectorAll('style').length,
        bodyShown: getComputedStyle(document.body).display !== 'none',
      };
    });
    assert.deepEqual(verdict, { pwned: null, forbidden: [], handlers: [], scripts: 2, styles: 0, bodyShown: true });
    const cells = await page.locator('#results-table .vl-row[aria-expanded="true"] pre').allTextContents();
    assert.equal(cells[0], PAYLOADS[0], 'the prompt shows literally');
    assert.equal(cells[1], evil, 'the response shows literally');
    assert.ok(await page.getByText(PAYLOADS[4]!).first().isVisible(), 'the run label shows literally');
    await shot(page, 'payloads-dark');
    await tab(page, 'compose');
    assert.ok(await page.locator('.conn', { hasText: `onerror="window.__pwned='src'"` }).isVisible());
    await assertClean(p);
  });

  it('screenshots: compose and results in the dark and the light theme', async () => {
    for (const theme of ['dark', 'light'] as const) {
      const p = await panel(theme);
      const { page } = p;
      await host(page, { type: 'init', state: initState() });
      await page.locator('#import').click();
      await answer(page, 'importFile', {
        name: 'questions.prompts.jsonl',
        text: ['Why is the sky blue?', 'Summarize the causes of the French Revolution in two sentences.', 'What does a KV cache store?', 'Translate "good morning" to Japanese.', 'List three uses of tree-reduce.']
          .map((q, i) => JSON.stringify({ prompt: q, id: i + 1, topic: ['physics', 'history', 'llm', 'language', 'swarm'][i] }))
          .join('\n'),
      });
      await page.locator('#import-replace').click();
      await page.locator('#prompt-list .vl-row[data-index="1"]').click();
      await page.locator('.tag[data-tag="role=chat"]').click();
      await page.locator('#compare-toggle').click();
      await shot(page, `compose-${theme}`);
      await page.evaluate((start) => {
        const H = (window as unknown as HostGlobal).__host;
        H.post(start);
        H.post({ type: 'runProgress', runId: 's', done: 260, ok: 234, failed: 26, total: 400, elapsedMs: 3120, resultsJsonl: H.jsonl(H.makeRows(260, { failEvery: 10 })) });
      }, started('s', 400, 'questions.prompts.jsonl · 400 prompts'));
      await page.locator('#results-table .vl-row[data-index="2"]').click();
      await page.locator('#results-table .vl-row[aria-expanded="true"]').waitFor();
      await shot(page, `results-${theme}`);
      await assertClean(p);
    }
  });
});

/**
 * End to end, the Swarm Lab panel in a real VS Code: the PACKAGED extension (built, packaged with vsce
 * like `npm run package`: packagedVsix) installed in
 * code-server 4.99.4, driven in headless Chromium with playwright-core. The local simulator
 * (`Swarm: Start Local Simulator`, 4 endpoints) answers; the panel runs a batched-vs-individual
 * comparison from its Compose tab, shows both arms side by side with their charts, and reruns it from
 * History. Screenshots: .tmp/screenshots/panel-*.png. SWARM_UI_VSIX=<path> tests that .vsix instead.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FrameLocator, Page } from 'playwright-core';
import { ROOT, startSim, type Sim } from './helpers/cli.ts';
import { codeServerAvailable, CODE_SERVER_DIR, installVsix, removeOnExit, startCodeServer, type CodeServer } from './helpers/code-server.ts';
import { activeTabLabel, connectFromExplorer, packagedVsix, openFromExplorer, recordStatusTexts, swarmStatusText } from './helpers/ui-fixtures.ts';
import { CHROMIUM, openWorkbench, quickPickSelect, runCommand, runCommandAnswering, screenshot, statusBarItem, type Workbench } from './helpers/workbench.ts';
import { patience, until as poll } from './helpers/patience.ts';

const SHOTS = join(ROOT, '.tmp', 'screenshots');
// Page callbacks run in the webview, with its globals; typed loosely so the node type check stays as it is.
declare const window: any;
declare const document: any;
declare const requestAnimationFrame: (callback: () => void) => number;
/** A saved run's record, beside its results in the runs folder (run-history.ts). */
const RECORD_SUFFIX = '.run.json';
const PROMPTS = ['What is a swarm?', 'Name three <b>birds</b> & "bees"', 'Count to five', 'Say hello', 'Why is the sky blue?', 'Spell "vLLM"', 'One word: yes', 'Last prompt'];

const skip = !codeServerAvailable
  ? `code-server is not installed in ${CODE_SERVER_DIR}: run scripts/install-code-server.sh`
  : !existsSync(CHROMIUM)
    ? `${CHROMIUM} is missing: run scripts/install-code-server.sh`
    : false;

/** The packaged extension (packagedVsix), checked to carry the panel's front end. */
function packageExtension(dir: string): string {
  const vsix = packagedVsix(dir);
  const files = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).split('\n');
  for (const f of ['dist/extension.cjs', 'dist/webview/panel.js', 'dist/webview/panel.css']) {
    assert.ok(files.includes(`extension/${f}`), `${vsix} lacks ${f} (the .vsix allow-list, .vscodeignore, must carry dist/webview/): ${files.join(' ')}`);
  }
  return vsix;
}

/** The panel's page: the webview iframe's active frame. */
/** Ports on loopback that nothing listens on (bound, then released). */
async function unusedPorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    ports.push((server.address() as AddressInfo).port);
    await new Promise<void>((r) => server.close(() => r()));
  }
  return ports;
}

const panelFrame = (page: Page): FrameLocator => page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');

/** Connects the workspace's `hostfile`, waits for its `healthy` endpoints, clears the toasts and opens the panel: its page and a tab finder. */
async function panelOn(page: Page, hostfile: string, healthy: RegExp): Promise<{ app: FrameLocator; tab: (name: string) => ReturnType<FrameLocator['locator']> }> {
  await connectFromExplorer(page, hostfile);
  await statusBarItem(page, healthy, { timeoutMs: 30_000 });
  await runCommand(page, 'Notifications: Clear All Notifications');
  await runCommand(page, 'Swarm: Open Panel');
  const app = panelFrame(page);
  return { app, tab: (name: string) => app.locator('vscode-tab-header', { hasText: name }).first() };
}

/**
 * `until` that shows the last value on timeout: probe errors count as "not yet", and so does a probe
 * that has not answered in 10 s (an evaluate in a webview frame being remade can hang for good; the
 * next probe finds the new frame).
 */
async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  let v: T | undefined;
  const ready = async () => {
    v = await probe().catch(() => undefined);
    return v !== undefined && ok(v);
  };
  await poll(ready, what, timeoutMs, { intervalMs: 200, probeTimeoutMs: 10_000 }).catch(() => {
    throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(v)})`);
  });
  return v as T;
}

describe('the Swarm Lab panel end to end (packaged extension in code-server)', { skip }, () => {
  let dir: string;
  let workspace: string;
  let forget: () => void;
  let server: CodeServer | undefined;
  let wb: Workbench | undefined;
  const sims: Sim[] = [];
  const timings: string[] = [];
  const t0 = Date.now();
  const lap = (what: string) => timings.push(`${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'swarm-panel-ui-'));
    forget = removeOnExit(dir);
    const vsix = packageExtension(dir);
    lap('packaged');
    const extensionsDir = join(dir, 'extensions');
    await installVsix(vsix, extensionsDir);
    lap('installed');
    workspace = join(dir, 'ws');
    await mkdir(workspace);
    await writeFile(join(workspace, 'README.md'), '# panel test\n'); // the explorer has a row to wait for
    // Long enough (several seconds on the local simulator) for the status bar to be seen counting toward it.
    await writeFile(join(workspace, 'big.prompts.txt'), Array.from({ length: 10_000 }, (_, i) => `big question ${i}`).join('\n'));
    await writeFile(join(workspace, 'small.prompts.txt'), Array.from({ length: 30 }, (_, i) => `small question ${i}`).join('\n'));
    // Three endpoints that answer and one that refuses every generation with HTTP 400 (the prompt's fault: no retry, no failover).
    const simDir = join(dir, 'sims');
    await mkdir(simDir);
    sims.push(await startSim(simDir, 'good.hostfile', 3), await startSim(simDir, 'bad.hostfile', 1, ['--fault-rate', '1', '--fault-status', '400']));
    await writeFile(join(workspace, 'flaky.hostfile'), `${sims.flatMap((x) => x.lines).join('\n')}\n`);
    // Two servers slow enough to watch a batched run stream in, and cancel it midway on a loaded machine (lorem answers of ~150 tokens at 40 ms a token).
    const slow = await startSim(simDir, 'slow.hostfile', 2, ['--reply', 'lorem', '--tpot-ms', '40', '--answer-tokens', '150']);
    sims.push(slow);
    await writeFile(join(workspace, 'slow.hostfile'), `${slow.lines.join('\n')}\n`);
    // A swarm of roles for the patterns: two hypotheses and two critiques writers, one of which refuses every generation.
    await writeFile(join(workspace, 'roles.hostfile'), `${[...sims[0]!.lines, ...sims[1]!.lines].map((l, i) => `${l}\trole=${i < 2 ? 'hypotheses' : 'critiques'}`).join('\n')}\n`);
    // Two endpoints nobody listens on: an all-down swarm.
    await writeFile(join(workspace, 'dead.hostfile'), `${(await unusedPorts(2)).map((port) => `127.0.0.1\t${port}`).join('\n')}\n`);
    server = await startCodeServer({ workspace, extensionsDir, userSettings: { 'workbench.colorTheme': 'Default Dark Modern' } });
    wb = await openWorkbench(server, workspace, { viewport: { width: 1400, height: 900 } });
    lap('workbench open');
  });

  after(async () => {
    await wb?.close();
    await server?.stop();
    await Promise.all(sims.map((x) => x.stop()));
    await rm(dir, { recursive: true, force: true });
    forget?.();
    console.log(`# panel UI timings: ${timings.join(' · ')}`);
  });

  test('compares batched and individual on the local simulator, both arms and their charts, and reruns it from History', { timeout: patience(240_000) }, async () => {
    const page = wb!.page;
    await runCommandAnswering(page, 'Swarm: Start Local Simulator', '4');
    await statusBarItem(page, /Swarm 4\/4/, { timeoutMs: 30_000 });
    lap('simulator up');

    await runCommand(page, 'Swarm: Open Panel');
    const app = panelFrame(page);
    await app.locator('#run').waitFor({ timeout: patience(30_000) });
    const csp = (await app.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content')) ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-[\w-]+'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.doesNotMatch(/script-src ([^;]*)/.exec(csp)![1]!, /self|https?:/, 'scripts only by nonce');
    await until(() => app.locator('#endpoint-count').textContent(), (t) => /All 4 endpoints/.test(t ?? ''), 'the 4 endpoints in the panel');
    lap('panel ready');

    // Compose: a few prompts, batched vs individual over 2 rounds.
    for (const prompt of PROMPTS) {
      await app.locator('#add-prompt').click();
      await app.locator('#prompt-editor textarea').fill(prompt);
    }
    await until(() => app.locator('#prompt-count').textContent(), (t) => t === String(PROMPTS.length), 'the prompt count');
    await app.locator('#compare-toggle').click();
    await app.locator('#rounds input').fill('2');
    await screenshot(page, join(SHOTS, 'panel-compose.png'));
    await app.locator('#run').click();

    const figures = app.locator('#compare-figures');
    await figures.waitFor({ timeout: patience(60_000) });
    await until(() => figures.locator('thead th').allTextContents(), (h) => h.map((s) => s.trim()).join('|') === '|batched|individual', 'both arms as columns');
    const requests = await until(
      () => figures.locator('tr[data-figure="generation requests"] .median').allTextContents(),
      (v) => v.length === 2,
      'the generation request counts',
    );
    // Batched: one request per endpoint; individual: one per prompt (medians over the rounds; a hedge copy of a slow answer, or the
    // first round's probe of the batch chat endpoint, adds one).
    const [batchedRequests, individualRequests] = requests.map(Number) as [number, number];
    assert.ok(batchedRequests >= 4 && batchedRequests < 6 && individualRequests >= PROMPTS.length && individualRequests < PROMPTS.length + 3, `generation requests ${requests.join(' / ')}`);
    assert.match((await figures.locator('tr[data-figure="HTTP requests"] td').first().getAttribute('title')) ?? '', /batched, all rounds:[\s\S]*× \/v1\/completions/, 'HTTP requests by path on hover');
    const canvases = await until(() => app.locator('[data-view="compare"] canvas').count(), (n) => n >= 4, 'the charts (timeline per arm, latency, load)');
    assert.ok(canvases >= 4);
    await until(() => app.locator('#run-status').getAttribute('data-state'), (s) => s !== 'running', 'the comparison to end');
    lap('comparison shown');
    await screenshot(page, join(SHOTS, 'panel-compare.png'));
    // Its table is the arm its header names: the batched arm's median round.
    await app.locator('vscode-tab-header', { hasText: 'Results' }).first().click();
    await until(() => app.locator('#arm-header').getAttribute('data-arm'), (a) => a === 'batched', 'the Results of the batched arm');
    assert.match(((await app.locator('#arm-header .arm-title').textContent()) ?? '').replace(/\s+/g, ' '), /Rows of the batched arm, round \d of 2/);
    await screenshot(page, join(SHOTS, 'panel-compare-table.png'));
    await app.locator('#arm-switch input[value="individual"]').check();
    await until(() => app.locator('#arm-header').getAttribute('data-arm'), (a) => a === 'individual', 'the switch to the individual arm');
    await screenshot(page, join(SHOTS, 'panel-compare-table-individual.png'));

    // History: the comparison is saved; rerun it.
    const tab = (name: string) => app.locator('vscode-tab-header', { hasText: name }).first();
    await tab('History').click();
    const rows = app.locator('#history-table tbody tr');
    await until(() => rows.count(), (n) => n === 1, 'one saved run');
    assert.match((await rows.first().textContent()) ?? '', /compare/);
    await screenshot(page, join(SHOTS, 'panel-history.png'));
    await rows.first().locator('[data-action="rerun"]').click();
    await until(() => rows.count(), (n) => n === 2, 'the rerun saved in history', 60_000);
    const labels = (await app.locator('#history-table tbody tr .run-name').allTextContents()).map((s) => s.trim());
    assert.equal(labels[0], labels[1], 'the rerun carries the same label');
    await tab('Comparison').click();
    await figures.waitFor();
    await until(() => app.locator('[data-view="compare"] canvas').count(), (n) => n >= 4, 'the rerun’s charts');
    lap('rerun done');
    await screenshot(page, join(SHOTS, 'panel-rerun.png'));

    // A window reload: the serializer brings the panel back, the host sends the history; a saved run reopens.
    // (What the webview restores from its own setState depends on when the web workbench last flushed it.)
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench').waitFor({ timeout: patience(30_000) });
    const revived = panelFrame(page);
    await revived.locator('#run').waitFor({ timeout: patience(30_000) });
    const revivedTab = (name: string) => revived.locator('vscode-tab-header', { hasText: name }).first();
    await until(() => revivedTab('History').textContent(), (t) => /2/.test(t ?? ''), 'the history from the host after reload');
    await revivedTab('History').click();
    await revived.locator('#history-table tbody tr').first().locator('[data-action="open"]').click();
    await revivedTab('Comparison').click();
    await until(() => revived.locator('[data-view="compare"] canvas').count(), (n) => n >= 4, 'the reopened comparison');
    lap('reloaded and reopened');
    await screenshot(page, join(SHOTS, 'panel-reloaded.png'));
    const problems = wb!.consoleLog().filter((l) => /Content Security Policy|Refused to/.test(l));
    assert.deepEqual(problems, [], 'no CSP violation');
  });

  test('the panel shows the run it was told about: a palette run while the panel is in the background brings that run forward, its total known from the start', { timeout: patience(240_000) }, async () => {
    const page = wb!.page;
    // (The window reload above restarted the extension host, and the simulator with it.)
    if ((await swarmStatusText(page)) === null) {
      await runCommandAnswering(page, 'Swarm: Start Local Simulator', '4');
    }
    await statusBarItem(page, /Swarm 4\/4/, { timeoutMs: 30_000 });
    // A big run from the palette: the status bar counts toward its total from the start, under its "Swarm" label.
    await openFromExplorer(page, 'big.prompts.txt');
    const statusTexts = await recordStatusTexts(page);
    await runCommand(page, 'Swarm: Scatter Prompts');
    await quickPickSelect(page, 'Individual');
    await until(() => swarmStatusText(page), (t) => /^Swarm 4\/4 · /.test(t ?? ''), 'the big run to end', 120_000);
    const shownWhileRunning = (await statusTexts()).filter((t) => /^Swarm [\d,]+\/[\d,]+ · /.test(t) && !/^Swarm 4\/4 · /.test(t));
    assert.ok(shownWhileRunning.length > 0, `the status bar showed the run: ${JSON.stringify(await statusTexts())}`);
    for (const t of shownWhileRunning) assert.match(t, /^Swarm [\d,]+\/10,000 · \d+\.\d s$/, 'counted toward its total from the start');
    const app = panelFrame(page);
    await until(() => app.locator('#run-status .run-label').textContent(), (t) => /big\.prompts\.txt/.test(t ?? ''), 'the panel on the big run');
    lap('big run shown');

    // The panel goes to the background; a small run from the palette.
    await openFromExplorer(page, 'small.prompts.txt');
    await runCommand(page, 'Swarm: Scatter Prompts');
    await quickPickSelect(page, 'Batched');
    await until(() => activeTabLabel(page), (l) => l === 'Swarm Lab', 'the panel to come forward', 60_000);
    const shown = panelFrame(page);
    await until(() => shown.locator('#run-status .run-label').textContent(), (t) => /small\.prompts\.txt/.test(t ?? ''), 'the panel on the small run');
    await until(() => shown.locator('#run-status').getAttribute('data-state'), (st) => st === 'done', 'the small run done');
    assert.equal((await shown.locator('#progress-done').textContent())?.trim(), '30');
    assert.equal((await shown.locator('#progress-total').textContent())?.trim(), '30');
    await until(() => shown.locator('#results-table').getAttribute('data-count'), (n) => n === '30', 'its 30 rows');
    assert.ok((await shown.getByText('small question 7').count()) > 0, 'its prompts, not the big run\'s');
    assert.equal(await shown.getByText('big question 7').count(), 0);
    lap('small run shown');
    await screenshot(page, join(SHOTS, 'panel-right-run.png'));
  });

  test('a comparison on a swarm with a failing endpoint: the run bar, the header and the verdict report each arm\'s failed prompts; the timeline draws the failed requests', { timeout: patience(240_000) }, async () => {
    const page = wb!.page;
    await connectFromExplorer(page, 'flaky.hostfile');
    await statusBarItem(page, /Swarm 4\/4/, { timeoutMs: 30_000 });
    await runCommand(page, 'Swarm: Open Panel');
    const app = panelFrame(page);
    await until(() => app.locator('#endpoint-count').textContent(), (t) => /All 4 endpoints/.test(t ?? ''), 'the flaky swarm in the panel');
    const tab = (name: string) => app.locator('vscode-tab-header', { hasText: name }).first();
    await tab('Compose').click();
    await app.locator('#pattern input[value="scatter"]').click();
    if (await app.locator('#clear-prompts:not([disabled])').count()) await app.locator('#clear-prompts').click();
    for (const prompt of PROMPTS) {
      await app.locator('#add-prompt').click();
      await app.locator('#prompt-editor textarea').fill(prompt);
    }
    await until(() => app.locator('#prompt-count').textContent(), (t) => t === String(PROMPTS.length), 'the prompt count');
    if (!(await app.locator('#compare-toggle').evaluate((e) => (e as unknown as { checked: boolean }).checked))) await app.locator('#compare-toggle').click();
    await app.locator('#rounds input').fill('2');
    // The run bar still shows the last run ('done') until the comparison's runStarted arrives: wait for a new run id.
    const before = await app.locator('#run-status').getAttribute('data-run');
    await app.locator('#run').click();
    await until(() => app.locator('#compare-of').textContent(), (t) => /8 prompts · batched vs individual × 2/.test(t ?? ''), 'the comparison on show');
    const runStatus = () => app.locator('#run-status').evaluate((e) => `${e.getAttribute('data-run')} ${e.getAttribute('data-state')}`);
    await until(runStatus, (st) => !st.startsWith(`${before} `) && st.endsWith(' done'), 'the comparison to end', 120_000);

    // The prompts the bad endpoint took failed, in both arms (batched: its 2 of 8 each round).
    const counts = ((await app.locator('#run-status .counts').textContent()) ?? '').replace(/\s+/g, ' ');
    const lost = /2 rounds per arm · batched: (\d+) of 16 prompts failed · individual: (\d+) of 16 prompts failed/.exec(counts);
    assert.ok(lost && Number(lost[1]) === 4 && Number(lost[2]) > 0, counts);
    for (const [i, arm] of ['batched', 'individual'].entries()) {
      const line = ((await app.locator(`#arm-losses li[data-arm="${arm}"]`).textContent()) ?? '').replace(/\s+/g, ' ');
      assert.ok(line.includes(`${arm}: 2 rounds · ${lost![i + 1]} of 16 prompts failed`), line);
    }
    const verdict = (await app.locator('#verdict').textContent()) ?? '';
    assert.match(verdict, /same wall time|but it lost prompts \(\d+ of 16 prompts failed\)/, `no arm is faster without saying what it lost: ${verdict}`);
    const legend = ((await app.locator('#timeline-legend').textContent()) ?? '').replace(/\s+/g, ' ');
    assert.ok(Number(/failed request \((\d+) in this round\)/.exec(legend)?.[1]) >= 2, `failed requests drawn in both arms: ${legend}`);
    await runCommand(page, 'Notifications: Clear All Notifications'); // the earlier runs' toasts would cover the charts
    await app.locator('#timeline-legend').scrollIntoViewIfNeeded();
    await screenshot(page, join(SHOTS, 'panel-compare-failing-endpoint.png'));
    lap('comparison with failures shown');
  });
  test('a batched run streams into the panel and a cancel keeps every answer that came; an all-down swarm is said before Run', { timeout: patience(240_000) }, async () => {
    const page = wb!.page;
    const { app, tab } = await panelOn(page, 'slow.hostfile', /Swarm 2\/2/);
    await tab('Compose').click();
    await app.locator('#pattern input[value="scatter"]').click();
    if (await app.locator('#clear-prompts:not([disabled])').count()) await app.locator('#clear-prompts').click();
    for (let i = 0; i < 16; i++) {
      await app.locator('#add-prompt').click();
      await app.locator('#prompt-editor textarea').fill(`Tell me a long story, number ${i + 1}`);
    }
    const checked = (id: string) => app.locator(id).evaluate((e) => (e as unknown as { checked: boolean }).checked);
    if (await checked('#compare-toggle')) await app.locator('#compare-toggle').click();
    assert.equal(await checked('#batch'), true, 'batched');
    assert.equal(await checked('#stream'), true, 'streamed by default');
    await app.locator('#max-tokens input').fill('400');
    const before = await app.locator('#run-status').getAttribute('data-run');
    await app.locator('#run').click();
    // Answers come in one by one while the two batches still generate; the clock moves.
    const progress = async () => {
      const [run, state, done, total] = await Promise.all([app.locator('#run-status').getAttribute('data-run'), app.locator('#run-status').getAttribute('data-state'), app.locator('#progress-done').textContent().catch(() => null), app.locator('#progress-total').textContent().catch(() => null)]);
      return { run, state, done: Number(done ?? 0), total: Number(total ?? 0) };
    };
    const live = await until(progress, (p) => p.run !== before && p.state === 'running' && p.done >= 3 && p.done < 12, 'answers streaming in', 60_000);
    assert.equal(live.total, 16);
    await screenshot(page, join(SHOTS, 'panel-live-batched.png'));
    await app.locator('#cancel').click();
    const ended = await until(progress, (p) => p.state === 'cancelled', 'the cancelled run', 30_000);
    const ok = Number(/([\d,]+) ok/.exec((await app.locator('#run-status .counts').textContent()) ?? '')?.[1] ?? -1);
    assert.ok(ok >= live.done, `every answer seen before the cancel is kept (${ok} ≥ ${live.done}; ${JSON.stringify(ended)})`);
    await tab('Results').click();
    await screenshot(page, join(SHOTS, 'panel-live-cancelled.png'));
    lap('live batched run cancelled');

    await connectFromExplorer(page, 'dead.hostfile');
    await statusBarItem(page, /Swarm 0\/2/, { timeoutMs: 30_000 });
    await tab('Compose').click();
    const warning = await until(() => app.locator('#health-warning').textContent().catch(() => null), (t) => /All 2 endpoints are down: every prompt will fail/.test(t ?? ''), 'the all-down warning');
    assert.ok(warning);
    assert.equal(((await app.locator('#run').textContent()) ?? '').trim(), 'Run anyway');
    assert.match(((await app.locator('.conn').textContent()) ?? '').replace(/\s+/g, ' '), /2 endpoints · 0 healthy, 2 down/);
    await screenshot(page, join(SHOTS, 'panel-all-down.png'));
    lap('all-down warning');
  });

  test('each pattern from Compose on a swarm of roles with one failing endpoint: its result under a tab named for it, what failed said at the final answer', { timeout: patience(300_000) }, async () => {
    const page = wb!.page;
    const { app, tab } = await panelOn(page, 'roles.hostfile', /Swarm 4\/4/);
    await until(() => app.locator('.conn').textContent(), (t) => /4 endpoints/.test(t ?? ''), 'the swarm of roles in the panel');
    const setSelect = (selector: string, v: string) =>
      app.locator(selector).evaluate((el, value) => {
        (el as unknown as { value: string }).value = value;
        el.dispatchEvent(new Event('change', { bubbles: true }));
      }, v);
    const runStatus = () => app.locator('#run-status').evaluate((e) => `${e.getAttribute('data-run')} ${e.getAttribute('data-state')}`);
    const patterns: Array<[pattern: string, tabName: RegExp, fill: () => Promise<void>]> = [
      ['tree-reduce', /Reduce tree/, async () => {
        await app.locator('#items textarea').fill(Array.from({ length: 12 }, (_, i) => `item number ${i + 1}`).join('\n'));
        await app.locator('#fanin input').fill('3');
      }],
      ['broadcast', /Broadcast/, async () => {
        await app.locator('#broadcast-prompt textarea').fill('Yes or no: is a swarm a crowd?');
        await setSelect('#aggregate', 'vote');
      }],
      ['fan-out-fan-in', /Fan-out/, async () => {
        await app.locator('#fanout-prompt textarea').fill('Name a use of a swarm');
      }],
      ['pipeline', /Pipeline/, async () => {
        await app.locator('#pipeline-input textarea').fill('a poem about GPUs');
      }],
      ['blackboard', /Blackboard/, async () => {
        await app.locator('#max-rounds input').fill('2');
      }],
    ];
    for (const [pattern, tabName, fill] of patterns) {
      await tab('Compose').click();
      await app.locator(`#pattern input[value="${pattern}"]`).click();
      if (await app.locator('#compare-toggle').count() && (await app.locator('#compare-toggle').evaluate((e) => (e as unknown as { checked: boolean }).checked))) await app.locator('#compare-toggle').click();
      await fill();
      const before = await app.locator('#run-status').getAttribute('data-run');
      await app.locator('#run').click();
      const ended = await until(runStatus, (st) => !st.startsWith(`${before} `) && !st.endsWith(' running'), `the ${pattern} run to end`, 120_000);
      await until(() => app.locator('#tree').getAttribute('data-pattern'), (p) => p === pattern, `the ${pattern} steps on show (${ended})`);
      const header = ((await app.locator('vscode-tab-header[data-tab="tree"]').textContent()) ?? '').replace(/\s+/g, ' ');
      assert.match(header, tabName, `the steps tab is named for ${pattern}`);
      // A prompt the failing endpoint took is said at the final answer (named, with why), never dropped silently.
      const failed = Number(/([\d,]+) failed/.exec((await app.locator('#run-status .counts').textContent()) ?? '')?.[1] ?? 0);
      if (failed) assert.match(((await app.locator('#tree-missing').textContent()) ?? '').replace(/\s+/g, ' '), /did not reach it\..*HTTP 400/, `${pattern}: its ${failed} failed at the final answer`);
      else assert.equal(await app.locator('#tree-complete').count(), 1, `${pattern}: nothing failed, and it says so`);
      // A vote that is the answer (a broadcast's, a pipeline's last stage's) is drawn as a table there, not as JSON.
      if (pattern === 'broadcast' || pattern === 'pipeline') assert.equal(await app.locator('section.final .aggregate[data-aggregate="vote"]').count(), 1, `${pattern}: the vote at the final answer`);
      await runCommand(page, 'Notifications: Clear All Notifications');
      await screenshot(page, join(SHOTS, `panel-pattern-${pattern}.png`));
    }
    lap('patterns shown');
  });

  // Its limit is a hang guard above the sum of its waits' own (120 + 60 + 3 × 30 + 180 s), each of which
  // fails saying what it waited for: at 300 s, a loaded run hit this one first and said nothing.
  test('10,000 prompts over 1,000 endpoints, batched: the panel says done soon after the run ends, its frames short; the servers\' /metrics while it runs', { timeout: patience(600_000) }, async (t) => {
    const page = wb!.page;
    await runCommandAnswering(page, 'Swarm: Start Local Simulator', '1000');
    await statusBarItem(page, /Swarm 1000\/1000/, { timeoutMs: 120_000 });
    lap('1,000 simulated endpoints up');
    await runCommand(page, 'Notifications: Clear All Notifications');
    // The prompts' file in the first editor group, the panel in the second: both in view, so the webview is never hidden (and remade) mid-run.
    await openFromExplorer(page, 'big.prompts.txt');
    await runCommand(page, 'Swarm: Open Panel');
    await runCommand(page, 'View: Move Editor into Next Group');
    const app = panelFrame(page);
    await until(() => app.locator('.conn').textContent(), (t) => /1000 endpoints/.test(t ?? ''), 'the 1,000 endpoints in the panel', 60_000);
    lap('1,000 endpoints in the panel');
    // Inside the webview: when it first shows a run of big.prompts.txt done, the longest gap between its frames, whether the
    // servers' line showed. Installed by every poll if missing (a webview remade meanwhile starts again; `since` says when).
    // (As text: tsx would wrap a named function inside it with a helper the webview does not have.)
    const watchBig = `() => {
      const w = window;
      if (!w.__big) {
        w.__big = { doneAt: 0, longestFrame: 0, servers: '', since: Date.now(), shown: false, finishedAt: 0, endedAt: 0, historyAt: 0, lastRowsAt: 0, runId: '', progress: [], endpointLists: 0, statusChanges: 0 };
        // When the host's messages reach the page (before the panel reduces and draws them); each runProgress with the run's clock when it was sent.
        window.addEventListener('message', (e) => {
          const m = e.data;
          if (!m || typeof m.type !== 'string') return;
          if (m.type === 'runStarted' && /big\.prompts\.txt/.test(m.label)) w.__big.runId = m.runId;
          if (m.type === 'runProgress' && m.runId === w.__big.runId) {
            const text = m.resultsJsonl || '';
            const rows = text ? text.split('\\n').length : 0;
            w.__big.progress.push([Date.now(), m.elapsedMs, rows, text.length]);
            if (rows) w.__big.lastRowsAt = Date.now();
          }
          if (m.type === 'runFinished' && m.runId === w.__big.runId) {
            w.__big.finishedAt = Date.now();
            w.__big.endedAt = m.endedAt || 0;
          }
          if (m.type === 'endpoints' && w.__big.runId && !w.__big.finishedAt) w.__big.endpointLists++;
          if (m.type === 'endpointStatus' && w.__big.runId && !w.__big.finishedAt) w.__big.statusChanges++;
          if (m.type === 'history' && w.__big.finishedAt && !w.__big.historyAt) w.__big.historyAt = Date.now();
        });
        // The page is read every 50 ms, not every frame: reading it each frame cost the thread it measures (5 % of it).
        const look = setInterval(() => {
          const status = document.querySelector('#run-status');
          const label = status?.querySelector('.run-label')?.textContent ?? '';
          w.__big.shown = w.__big.shown || /big\\.prompts\\.txt/.test(label);
          const servers = document.querySelector('#run-servers')?.textContent;
          if (servers && /big\\.prompts\\.txt/.test(label)) w.__big.servers = servers.replace(/\\s+/g, ' ').trim();
          if (!w.__big.doneAt && status?.getAttribute('data-state') === 'done' && /big\\.prompts\\.txt/.test(label)) {
            w.__big.doneAt = Date.now();
            clearInterval(look);
          }
        }, 50);
        let last = performance.now();
        const frame = () => {
          const now = performance.now();
          // Frames count from when the panel shows the big run.
          if (w.__big.shown) w.__big.longestFrame = Math.max(w.__big.longestFrame, now - last);
          last = now;
          if (!w.__big.doneAt) requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
      }
      return w.__big;
    }`;
    type Big = { doneAt: number; longestFrame: number; servers: string; since: number; shown: boolean; finishedAt: number; endedAt: number; historyAt: number; lastRowsAt: number; progress: Array<[number, number, number, number]>; endpointLists: number; statusChanges: number };
    // A string evaluates as an expression in the webview's own frame (Frame.evaluate; a locator would take it as a value).
    const poll = async () => {
      const frame = await (await app.locator('#run-status').elementHandle())?.ownerFrame();
      return (await frame!.evaluate(`(${watchBig})()`)) as Big;
    };
    await until(poll, (b) => Boolean(b), 'the watch in the webview');
    lap('the watch in the webview');
    // The workbench's own main thread (the webview draws in a frame of its own): its long tasks, to tell where a late message waited.
    await page.evaluate(`(() => {
      window.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__longTasks.push([performance.timeOrigin + e.startTime, e.duration]);
      }).observe({ type: 'longtask' });
    })()`);
    await runCommand(page, 'View: Focus First Editor Group');
    const sent = Date.now();
    for (let attempt = 1; ; attempt++) {
      await runCommand(page, 'Swarm: Scatter Prompts');
      // An extension host serving 1,000 simulated endpoints can take longer than the default 10 s to show its pick on a loaded machine.
      const picked = await quickPickSelect(page, 'Batched', { timeoutMs: 30_000 }).then(
        () => true,
        async (err: Error) => {
          if (attempt < 3) return false;
          // What showed instead (another pick, an input box, a toast), for the one who reads the failure.
          await screenshot(page, join(SHOTS, 'panel-1000-no-pick.png'));
          const shown = ((await page.locator('.quick-input-widget').textContent({ timeout: 2_000 }).catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();
          const toasts = await page.locator('.notification-toast').allTextContents().catch(() => []);
          const log = server?.extensionLog().split('\n').slice(-30).join('\n');
          throw new Error(`${err.message}\nthe quick input: "${shown}"; the active tab: ${await activeTabLabel(page)}; toasts: ${JSON.stringify(toasts)}; the extension's log ends:\n${log}`);
        },
      );
      lap(`Scatter's pick, attempt ${attempt}: ${picked ? 'shown' : 'not shown'}`);
      if (picked) break;
      await page.keyboard.press('Escape');
      await runCommand(page, 'View: Focus First Editor Group');
    }
    const big = await until(poll, (b) => b.doneAt > 0, 'the panel to say the big run is done', 180_000).catch(async (err: Error) => {
      await screenshot(page, join(SHOTS, 'panel-1000-timeout.png'));
      throw err;
    });
    assert.ok(big.since <= sent, `the watch ran in the webview from before the run (installed ${big.since - sent} ms after the command)`);
    // The run's end, host side: its record's start plus its wall time (the record's start is taken before the run's clock starts, so this is never late).
    const runs = join(workspace, '.swarm', 'runs');
    const records = (await readdir(runs)).filter((f) => f.endsWith(RECORD_SUFFIX));
    const saved = records.map((f) => JSON.parse(readFileSync(join(runs, f), 'utf8')) as { record: { label: string; startedAt: string; summary: { wallMs: number; ok: number; prompts: number; endpoints: unknown[] } } });
    const record = saved.map((x) => x.record).filter((r) => /big\.prompts\.txt/.test(r.label) && r.summary.prompts === 10_000).sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0]!;
    // Where the time goes: the host saving the record (its file's time), then the panel hearing and drawing it.
    const savedAt = statSync(join(runs, `${(record as unknown as { id: string }).id}${RECORD_SUFFIX}`)).mtimeMs;
    // Its results file's last write: its last row, on the host's clock (the record's start is taken before the run is prepared, so the run's end from it is early by that).
    const rowsAt = statSync(join(runs, (record as unknown as { file: string }).file)).mtimeMs;
    assert.ok(record, 'the big batched run is saved');
    assert.equal(record.summary.ok, 10_000);
    assert.equal(record.summary.endpoints.length, 1_000);
    // The run's end as the host said it with runFinished (its clock when the core's run settled); else its record's start plus its wall time (early by the run's preparation).
    assert.ok(big.endedAt > 0, 'runFinished says when the run ended');
    const runEnd = big.endedAt || Date.parse(record.startedAt) + record.summary.wallMs;
    const delay = big.doneAt - runEnd;
    // How late the run's progress reached the page: its arrival less the run's clock when the host sent it, at each quarter of the run.
    const runStart = runEnd - record.summary.wallMs;
    const lags = big.progress.map(([at, elapsed, rows, bytes]) => ({ lag: at - (runStart + elapsed), elapsed, rows, bytes }));
    const lagAt = (q: number) => lags.filter((l) => l.elapsed <= q * record.summary.wallMs).at(-1)?.lag ?? NaN;
    const longTasks = ((await page.evaluate('window.__longTasks')) as Array<[number, number]>).filter(([at]) => at >= runStart && at <= big.doneAt);
    const sum = (list: Array<[number, number]>) => Math.round(list.reduce((n, [, d]) => n + d, 0));
    t.diagnostic(
      `endpoint lists during the run: ${big.endpointLists} (status changes: ${big.statusChanges}) · progress messages: ${lags.length}, most rows in one ${Math.max(0, ...lags.map((l) => l.rows))} (${(Math.max(0, ...lags.map((l) => l.bytes)) / 1e6).toFixed(1)} MB of rows); reached the page late by ${[0.25, 0.5, 0.75, 1].map((q) => `${(lagAt(q) / 1000).toFixed(2)} s`).join(' / ')} (a quarter, half, three quarters, all of the run)` +
        ` · the workbench's long tasks: ${sum(longTasks)} ms during the run and after (${sum(longTasks.filter(([at]) => at >= runEnd))} ms after its end), longest ${Math.round(Math.max(0, ...longTasks.map(([, d]) => d)))} ms`,
    );
    const after = (t: number) => (t ? `+${((t - runEnd) / 1000).toFixed(2)} s` : 'never');
    const figures = `load ${loadavg().map((l) => l.toFixed(1)).join(' ')} · run wall ${(record.summary.wallMs / 1000).toFixed(2)} s · "done" in the panel ${(delay / 1000).toFixed(2)} s after the run's end (results file written at ${after(rowsAt)}, last rows reached the page at ${after(big.lastRowsAt)}, runFinished at ${after(big.finishedAt)}, record saved at ${after(savedAt)}, history at ${after(big.historyAt)}) · longest frame in the panel ${Math.round(big.longestFrame)} ms · servers line: ${big.servers || '(none seen)'}`;
    t.diagnostic(figures);
    timings.push(`10,000 × 1,000: ${figures}`);
    await screenshot(page, join(SHOTS, 'panel-1000-done.png'));
    await app.locator('vscode-tab-header[data-tab="results"]').click();
    await screenshot(page, join(SHOTS, 'panel-1000-results.png'));
    assert.ok(delay >= 0, `the panel said done before the run ended? ${delay} ms`);
    // Live rows came light (long answers cut): the first row opened shows its whole answer, as the results file has it.
    const first = JSON.parse(readFileSync(join(runs, (record as unknown as { file: string }).file), 'utf8').split('\n')[0]!) as { text: string };
    assert.ok(first.text.length > 120, `the simulator's answers are long enough to be cut (${first.text.length} characters)`);
    await app.locator('#results-table .rt-scroll').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await app.locator('#results-table .vl-row[aria-expanded="true"] pre', { hasText: first.text.slice(-60) }).waitFor({ timeout: 30_000 });
  });
});

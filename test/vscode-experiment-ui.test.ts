/**
 * End to end, an experiment file run from the editor in a real VS Code: the PACKAGED extension in
 * code-server, driven in headless Chromium. `Swarm: Run Experiment` on a *.swarm.yaml (the explorer's
 * context menu) runs it with the bundled CLI against the simulator; the experiment view shows the
 * sweep as one table and one chart with the planner's prediction beside each run, and one run's
 * servers against time beside the client's figures — at 1,000 endpoints too, started from the palette
 * (which picks among the workspace's experiment files), its servers drawn while it runs.
 * Screenshots: .tmp/screenshots/experiment-*.png (SWARM_SHOTS=<dir> puts them there instead).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FrameLocator, Page } from 'playwright-core';
import { ROOT, startSim, type Sim } from './helpers/cli.ts';
import { codeServerAvailable, CODE_SERVER_DIR, installVsix, removeOnExit, startCodeServer, type CodeServer } from './helpers/code-server.ts';
import { packagedVsix, pollUntil, showActivity, waitForSwarmContributions } from './helpers/ui-fixtures.ts';
import { CHROMIUM, explorerContextMenu, explorerContextMenuItems, openWorkbench, quickPickSelect, runCommand, screenshot, type Workbench } from './helpers/workbench.ts';
import { patience } from './helpers/patience.ts';

const SHOTS = process.env.SWARM_SHOTS ?? join(ROOT, '.tmp', 'screenshots');

const skip = !codeServerAvailable
  ? `code-server is not installed in ${CODE_SERVER_DIR}: run scripts/install-code-server.sh`
  : !existsSync(CHROMIUM)
    ? `${CHROMIUM} is missing: run scripts/install-code-server.sh`
    : false;

/**
 * Right-click → Run Experiment on `fileName`, once the workbench knows the extension's menus; a menu
 * that opened before they arrived is closed and opened again.
 */
async function runFromExplorer(page: Page, fileName: string): Promise<void> {
  await waitForSwarmContributions(page, patience(60_000));
  for (let attempt = 1; ; attempt++) {
    await showActivity(page, 'Explorer');
    try {
      await explorerContextMenu(page, fileName, 'Run Experiment', { timeoutMs: 10_000 });
      return;
    } catch (err) {
      await page.keyboard.press('Escape');
      if (attempt === 3) throw new Error(`${(err as Error).message}\nthe menu of ${fileName}: ${(await explorerContextMenuItems(page, fileName)).join(' | ')}`);
    }
  }
}

/** Scrolls to a section of the view; before its first reading the servers section is a line of text, so an element found may be gone: found again. */
async function scrollTo(view: FrameLocator, selector: string): Promise<void> {
  await pollUntil(() => view.locator(selector).scrollIntoViewIfNeeded({ timeout: 2_000 }).then(() => true), (ok) => ok, 20_000);
}

/** The experiment view's page: the only webview open (each test closes its editors first). */
const viewFrame = (page: Page): FrameLocator => page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');

describe('experiment files run from the editor (packaged extension in code-server)', { skip }, () => {
  let dir: string;
  let workspace: string;
  let forget: () => void;
  let server: CodeServer | undefined;
  let wb: Workbench | undefined;
  const sims: Sim[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'swarm-experiment-ui-'));
    forget = removeOnExit(dir);
    const extensionsDir = join(dir, 'extensions');
    await installVsix(packagedVsix(dir), extensionsDir);
    workspace = join(dir, 'ws');
    const simDir = join(dir, 'sims');
    await mkdir(workspace);
    await mkdir(simDir);
    // Four servers of 4 sequences at 20 ms a token: a concurrency sweep whose runs last seconds.
    const four = await startSim(simDir, 'four.hostfile', 4, ['--max-num-seqs', '4', '--tpot-ms', '20', '--ttft-ms', '40', '--reply', 'lorem', '--answer-tokens', '1000']);
    // 1,000 servers of 4 sequences at 400 ms a token: a list of 16 each is four waves of ~12 s, long enough for several readings of a sample of the 1,000 (each followed by a pause as long as it took) on a loaded machine.
    const fleet = await startSim(simDir, 'fleet.hostfile', 1_000, ['--max-num-seqs', '4', '--tpot-ms', '400', '--reply', 'lorem', '--answer-tokens', '1000'], {}, patience(120_000));
    sims.push(four, fleet);
    await writeFile(join(workspace, 'sweep.swarm.yaml'), ['# in flight against wall time, streamed: the planner fits the first run', `endpoints: {hostfile: ${four.hostfile}, max_num_seqs: 4}`, 'prompts: {count: 48, input_len: 40}', 'params: {batch: false, stream: true}', 'sampling: {max_tokens: 16}', 'repetitions: 2', 'sweep: {parameter: concurrency, values: [4, 8, 16]}', ''].join('\n'));
    await writeFile(join(workspace, 'fleet.swarm.yaml'), ['# one batched list of 16 prompts to each of 1,000 servers, all at once', `endpoints: {hostfile: ${fleet.hostfile}, max_num_seqs: 4}`, 'prompts: {count: 16, input_len: 20}', 'params: {list_length: 16, concurrency: 1000}', 'sampling: {max_tokens: 30}', ''].join('\n'));
    server = await startCodeServer({ workspace, extensionsDir, userSettings: { 'workbench.colorTheme': 'Default Dark Modern' } });
    wb = await openWorkbench(server, workspace, { viewport: { width: 1400, height: 1000 } });
  });

  after(async () => {
    await wb?.close();
    await server?.stop();
    await Promise.all(sims.map((x) => x.stop()));
    await rm(dir, { recursive: true, force: true });
    forget?.();
  });

  test('a concurrency sweep from the explorer\'s menu: one table and one chart, the planner beside every run, the servers against time', { timeout: patience(300_000) }, async () => {
    const page = wb!.page;
    await runFromExplorer(page, 'sweep.swarm.yaml');
    const view = viewFrame(page);
    await view.locator('#exp-status').waitFor({ timeout: patience(60_000) });
    const csp = (await view.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content')) ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-[\w-]+'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    // Runs come in as they finish, before the sweep's table.
    await pollUntil(() => view.locator('#exp-runs tbody tr').count(), (n) => n >= 1, 120_000);
    const status = await pollUntil(() => view.locator('#exp-status').textContent(), (t) => /^finished/.test(t ?? ''), 240_000);
    assert.match(status ?? '', /^finished · 6 runs$/);
    const sweepRows = view.locator('#exp-sweep table.data').first().locator('tbody tr');
    assert.equal(await sweepRows.count(), 3);
    for (const [i, c] of ['4', '8', '16'].entries()) {
      const cells = (await sweepRows.nth(i).locator('td').allTextContents()).map((t) => t.trim());
      // Value, arm, median wall, IQR, runs, the planner's predicted wall.
      assert.deepEqual([cells[0], cells[1], cells[4]], [c, 'individual', '2'], cells.join(' | '));
      assert.match(cells[3]!, /^[\d.]+ – [\d.]+$/);
      assert.match(cells[5]!, /^[\d.]+ s$/);
    }
    const plan = await view.locator('#exp-plan table.data tbody tr').allTextContents();
    assert.equal(plan.length, 6, plan.join(' | '));
    assert.match(plan[0]!, /^4 individual #1 \(fitted\)[\d.]+ s[\d.]+ s-?[\d.]+ %$/);
    assert.equal(await view.locator('#exp-sweep-chart canvas').count(), 1, 'the sweep chart drawn');
    assert.equal(await view.locator('#exp-servers-chart canvas').count(), 1, 'the servers chart drawn');
    assert.match((await view.locator('#exp-client').textContent()) ?? '', /client CPU \/ request[\d.]+ ms/);
    await screenshot(page, join(SHOTS, 'experiment-sweep.png'));
    await view.locator('#exp-sweep h3', { hasText: 'Planner' }).evaluate((h: any) => h.scrollIntoView({ block: 'start' }));
    await screenshot(page, join(SHOTS, 'experiment-prediction.png'));
    // The fitted run, the longest: several readings of its servers.
    await view.locator('#exp-servers-run').selectOption('4-individual-1');
    await pollUntil(() => view.locator('#exp-servers .chart-box .muted').textContent(), (t) => /readings/.test(t ?? ''), 10_000);
    await view.locator('#exp-servers').evaluate((e: any) => e.scrollIntoView({ block: 'start' }));
    await screenshot(page, join(SHOTS, 'experiment-servers-sweep.png'));
  });

  test('1,000 endpoints from the palette: the servers against time as sums and bands, drawn while the run goes, beside the client', { timeout: patience(300_000) }, async () => {
    const page = wb!.page;
    await runCommand(page, 'View: Close All Editors');
    // No experiment file open: the palette's command offers the workspace's.
    await runCommand(page, 'Swarm: Run Experiment');
    await quickPickSelect(page, 'fleet.swarm.yaml');
    const view = viewFrame(page);
    await view.locator('#exp-status').waitFor({ timeout: patience(60_000) });
    // Before the run ends: its servers' readings so far, a sample of the 1,000, redrawn as they come.
    const live = await pollUntil(() => view.locator('#exp-servers .chart-box .muted').textContent().catch(() => null), (t) => /readings so far/.test(t ?? ''), 120_000);
    assert.match(live ?? '', /^1,000 endpoints, \d+ readings so far: sums over the servers that answered \(a sample of 128, the same each reading, scaled to all 1,000\)/);
    assert.match((await view.locator('#exp-status').textContent()) ?? '', /^running/);
    assert.match((await view.locator('#exp-servers-run option[selected]').textContent()) ?? '', /\(running\)$/);
    // The run picker focused keeps its focus and stays the same element while readings come (the view is patched, not rebuilt).
    await view.locator('#exp-servers-run').evaluate((e: any) => ((e.__kept = true), e.focus()));
    await pollUntil(() => view.locator('#exp-servers .chart-box .muted').textContent(), (t) => t !== live, 120_000);
    assert.deepEqual(await view.locator('#exp-servers-run').evaluate((e: any) => [e.__kept === true, e.ownerDocument.activeElement === e]), [true, true], 'the same picker, focused, after the next reading');
    await scrollTo(view, '#exp-servers');
    await screenshot(page, join(SHOTS, 'experiment-servers-1000-live.png'));
    await pollUntil(() => view.locator('#exp-status').textContent(), (t) => /^finished/.test(t ?? ''), 240_000);
    const note = (await view.locator('#exp-servers .chart-box .muted').textContent()) ?? '';
    assert.match(note, /^1,000 endpoints, \d+ readings: sums over the servers that answered \(a sample of 128/);
    assert.ok(Number(/(\d+) readings/.exec(note)![1]) >= 2, note);
    assert.match((await view.locator('#exp-client').textContent()) ?? '', /prompts16,000 ok · 0 failed/);
    await scrollTo(view, '#exp-servers');
    await screenshot(page, join(SHOTS, 'experiment-servers-1000.png'));
    // In a light theme the charts are drawn again in its colours.
    await runCommand(page, 'Preferences: Color Theme');
    await quickPickSelect(page, /^Light Modern/);
    await pollUntil(() => page.locator('.monaco-workbench.vs').count(), (n) => n > 0, 20_000);
    await scrollTo(view, '#exp-servers');
    await screenshot(page, join(SHOTS, 'experiment-servers-1000-light.png'));
  });
});

/**
 * Detached runs in a real VS Code (code-server + headless Chromium, the packaged .vsix): a run
 * detached from the CLI shows in the Detached Runs view with live progress; Attach streams its rows
 * into a file and opens it; a reloaded window shows the run again and keeps following it; Cancel
 * keeps every finished row; Resume completes the rest. Screenshots go to .tmp/screenshots/detached-*.png.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { jsonLines, killAll, ROOT, runCli, startSim, type Sim } from './helpers/cli.ts';
import { codeServerAvailable, CODE_SERVER_DIR, installVsix, removeOnExit, startCodeServer, type CodeServer } from './helpers/code-server.ts';
import { haveSshd, TestSshd } from './helpers/sshd.ts';
import { activeTabLabel, connectFromExplorer, endpointRows, packagedVsix, pollUntil, showActivity, waitForSwarmContributions } from './helpers/ui-fixtures.ts';
import { CHROMIUM, notifications, openWorkbench, runCommand, runCommandPicking, screenshot, treeRows, type Workbench } from './helpers/workbench.ts';
import { patience } from './helpers/patience.ts';
import { pacingGate, type PacingGate } from './helpers/pacing-gate.ts';

const SHOTS = process.env.SWARM_SHOTS ?? join(ROOT, '.tmp', 'screenshots');
const N = 400;

/**
 * The Detached Runs view's row of run `id` once its description is `ok` (polled): that description.
 * Not reached, it fails with the rows, the toasts and the extension's log (what a command run from
 * the palette said went wrong).
 */
async function detachedRow(page: Page, server: CodeServer | undefined, id: string, ok: (description: string) => boolean, timeoutMs: number): Promise<string> {
  const rows = await pollUntil(() => treeRows(page, 'Detached Runs', { timeoutMs: 2_000 }), (r) => r.some((x) => x.label === id && ok(x.description)), timeoutMs, 300);
  const found = rows.find((x) => x.label === id);
  if (!found || !ok(found.description)) {
    const log = server?.extensionLog().split('\n').slice(-30).join('\n') ?? '';
    assert.fail(`rows ${JSON.stringify(rows.map((r) => [r.label, r.description]))}; toasts ${JSON.stringify(await notifications(page))}; the extension's log ends:\n${log}`);
  }
  return found.description;
}

/**
 * Runs the Detached Runs command `title` on run `id` from the palette until the extension's log says
 * `said` once more: a pick that a focus thief closed before it landed is tried again, and a failure
 * says the command never acted (rather than a row that never changed).
 */
async function actOnRun(page: Page, server: CodeServer | undefined, title: string, id: string, said: string): Promise<void> {
  const count = () => (server?.extensionLog() ?? '').split(said).length;
  const before = count();
  for (let attempt = 1; ; attempt++) {
    await runCommandPicking(page, title, id);
    const now = await pollUntil(count, (n) => n > before, 15_000);
    if (now > before) return;
    if (attempt === 3) assert.fail(`${title} on ${id}: the log never said "${said}" (three picks)`);
  }
}

/** The panel's page inside its webview frames. */
const panelApp = (page: Page) => page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');

/** The panel's History row of detached run `id`, once shown (the tab clicked again until it shows: a click while the panel starts may be lost). */
async function historyEntry(page: Page, id: string, timeoutMs = 30_000) {
  const app = panelApp(page);
  const entry = app.locator(`#history-table tbody tr[data-run="detached-${id}"]`);
  await pollUntil(
    async () => {
      if (!(await entry.isVisible())) await app.locator('vscode-tab-header', { hasText: 'History' }).first().click({ timeout: patience(2_000) }).catch(() => {});
      return entry.isVisible();
    },
    Boolean,
    timeoutMs,
    500,
  );
  return entry;
}

/** Fills the panel's Compose with `prompts` (the tab clicked again until it shows). */
async function compose(page: Page, prompts: readonly string[]): Promise<void> {
  const app = panelApp(page);
  await pollUntil(
    async () => {
      if (!(await app.locator('#add-prompt').isVisible())) await app.locator('vscode-tab-header', { hasText: 'Compose' }).first().click({ timeout: patience(2_000) }).catch(() => {});
      return app.locator('#add-prompt').isVisible();
    },
    Boolean,
    30_000,
    500,
  );
  for (const prompt of prompts) {
    await app.locator('#add-prompt').click();
    await app.locator('#prompt-editor textarea').fill(prompt);
  }
  await pollUntil(() => app.locator('#prompt-count').textContent(), (t) => t === String(prompts.length), 20_000);
}

/** Prompts done, from a row's `· 1,234/10,000` (-1 when it shows none). */
const done = (description: string) => Number(/ · ([\d,]+)\/[\d,]+/.exec(description)?.[1]?.replace(/,/g, '') ?? -1);
const skip = !codeServerAvailable ? `code-server is not installed in ${CODE_SERVER_DIR}: run scripts/install-code-server.sh` : !existsSync(CHROMIUM) ? `${CHROMIUM} is missing: run scripts/install-code-server.sh` : false;

describe('detached runs in a real VS Code: the Detached Runs view, Attach, a reload, Cancel, Resume', { skip, timeout: patience(400_000) }, () => {
  let root = '';
  let workspace = '';
  let sim: Sim;
  let gate: PacingGate;
  let server: CodeServer | undefined;
  let wb: Workbench | undefined;
  let page: Page;
  let id = '';
  const env: Record<string, string> = {};

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    root = await mkdtemp(join(tmpdir(), 'swarm-detached-ui-'));
    removeOnExit(root);
    env.SWARM_RUNS_DIR = join(root, 'runs');
    const vsix = packagedVsix(root);
    workspace = join(root, 'ws');
    await mkdir(workspace, { recursive: true });
    const extensions = join(root, 'ext');
    await installVsix(vsix, extensions);
    // The run goes only as far as the test lets it (the gate): still going through the reload and the
    // History checks, moving when a check needs it to, however busy the machine is.
    sim = await startSim(root, 'hosts', 2, ['--ttft-ms', '20']);
    gate = await pacingGate(sim.endpoints);
    gate.allow(10);
    const gated = join(root, 'gated.hostfile');
    await writeFile(gated, `${gate.lines.join('\n')}\n`);
    server = await startCodeServer({ workspace, extensionsDir: extensions, env, userSettings: { 'workbench.colorTheme': 'Default Dark Modern' } });
    wb = await openWorkbench(server, workspace);
    page = wb.page;
    await waitForSwarmContributions(page);
    // Started from a terminal while the window is open: the view finds it by itself.
    const prompts = join(root, 'p.txt');
    await writeFile(prompts, Array.from({ length: N }, (_, i) => `question ${i}`).join('\n'));
    const started = await runCli(['scatter', '--hostfile', gated, '--prompts', prompts, '--no-batch', '--concurrency', '1', '--detach'], { env, timeoutMs: 60_000 });
    assert.equal(started.code, 0, started.stderr);
    id = started.stdout.trim();
  });

  after(async () => {
    await wb?.close().catch(() => {});
    await server?.stop().catch(() => {});
    await killAll();
    await gate?.close();
    await sim?.stop();
    if (root) await rm(root, { recursive: true, force: true, maxRetries: 3 });
  });

  const row = (ok: (description: string) => boolean, timeoutMs = 30_000) => detachedRow(page, server, id, ok, timeoutMs);
  const target = () => join(workspace, '.swarm', 'detached', `${id}.jsonl`);
  const lines = () => (existsSync(target()) ? readFileSync(target(), 'utf8').split('\n').filter(Boolean).length : 0);

  test('the run from the CLI is listed with live progress; Attach streams its rows into a file and opens it; after a reload the view and the file go on', { timeout: patience(200_000) }, async () => {
    await showActivity(page, 'Swarm');
    const first = await row((d) => /^running · [\d,]+\/400 · [\d.]+ s$/.test(d));
    gate.allow(10);
    await row((d) => done(d) > done(first) && d.startsWith('running'));
    await screenshot(page, join(SHOTS, 'detached-1-running.png'));

    await runCommandPicking(page, 'Swarm: Attach to Detached Run', id);
    assert.equal(await pollUntil(() => activeTabLabel(page), (t) => t === `${id}.jsonl`, 20_000), `${id}.jsonl`);
    const before = await pollUntil(lines, (n) => n > 0, 20_000);
    assert.ok(before > 0 && before < N, `${before} rows streamed while it runs`);

    await page.reload({ waitUntil: 'domcontentloaded', timeout: patience(60_000) });
    await waitForSwarmContributions(page);
    // The reloaded window shows the Swarm view again by itself (its activity item may be busy meanwhile).
    await showActivity(page, 'Swarm').catch(() => {});
    await row((d) => d.startsWith('running'), 60_000);
    gate.allow(10);
    // The file is followed again: it grows with no click.
    const after = await pollUntil(lines, (n) => n > before, 30_000);
    assert.ok(after > before, `${after} rows after the reload, ${before} before`);
    const streamed = jsonLines(readFileSync(target(), 'utf8'));
    assert.equal(new Set(streamed.map((r) => r.index)).size, streamed.length, 'each row once');
    assert.ok(streamed.every((r) => r.prompt === `question ${r.index}` && r.status === 'ok'));
    await screenshot(page, join(SHOTS, 'detached-2-reloaded.png'));
  });

  test('History lists the run while it goes (detached · running, where it lives); Open shows its rows in input order, and more as they land', { timeout: patience(120_000) }, async () => {
    await runCommand(page, 'Swarm: Open Panel');
    const app = panelApp(page);
    const entry = await historyEntry(page, id);
    assert.equal(((await entry.locator('.run-ended').textContent()) ?? '').trim(), 'detached · running');
    assert.equal(((await entry.locator('[data-detached-where]').textContent()) ?? '').trim(), 'on this machine');
    await entry.locator('[data-action="open"]').click();
    const shown = app.locator(`#run-status[data-run="detached-${id}"] #progress-done`);
    const count = async () => Number(((await shown.textContent({ timeout: patience(2_000) }).catch(() => '')) ?? '').replace(/,/g, '') || -1);
    const first = await pollUntil(count, (n) => n > 0, 30_000);
    gate.allow(10);
    // Its rows are sent again as they land: the count grows with no click.
    const later = await pollUntil(count, (n) => n > first, 30_000);
    assert.ok(later > first && later <= N, `${first} rows, then ${later}`);
    // The run bar says it goes on (not done), its total the status file's.
    const bar = app.locator(`#run-status[data-run="detached-${id}"]`);
    assert.equal(await bar.getAttribute('data-state'), 'running');
    assert.equal(((await bar.locator('#progress-total').textContent()) ?? '').trim(), String(N));
    await screenshot(page, join(SHOTS, 'detached-history-streaming.png'));
  });

  test('Cancel keeps every finished row (exit 143, the file whole in input order); Resume sends only the rest and the file ends all ok', { timeout: patience(300_000) }, async () => {
    await actOnRun(page, server, 'Swarm: Cancel Detached Run', id, `cancelling detached run ${id}`);
    await row((d) => d.startsWith('finished (exit 143)'), 60_000);
    const cancelled = jsonLines(readFileSync(target(), 'utf8'));
    const whole = await pollUntil(() => jsonLines(readFileSync(target(), 'utf8')), (r) => r.length === N && r.every((x, i) => x.index === i), 20_000);
    assert.deepEqual(whole.map((r) => r.index), Array.from({ length: N }, (_, i) => i));
    const ok = whole.filter((r) => r.status === 'ok').length;
    assert.ok(ok > 0 && ok < N, `${ok} ok of ${N} (${cancelled.length} rows read first)`);
    assert.equal(whole.filter((r) => r.status === 'cancelled').length, N - ok);

    gate.open();
    await actOnRun(page, server, 'Swarm: Resume Detached Run', id, `resuming detached run ${id}`);
    await row((d) => d.startsWith('running') || d.startsWith('finished (exit 0)'), 60_000);
    await screenshot(page, join(SHOTS, 'detached-3-resumed.png'));
    const final = await row((d) => d.startsWith('finished (exit 0)'), 180_000);
    // The resumed run sent exactly the prompts the cancel left without a result.
    assert.match(final, new RegExp(`^finished \\(exit 0\\) · ${(N - ok).toLocaleString('en-US')}/${(N - ok).toLocaleString('en-US')} · `));
    const rows = await pollUntil(() => jsonLines(readFileSync(target(), 'utf8')), (r) => r.length === N && r.every((x) => x.status === 'ok'), 20_000);
    assert.deepEqual(rows.map((r) => [r.index, r.prompt, r.status]), Array.from({ length: N }, (_, i) => [i, `question ${i}`, 'ok']));
  });

  test('Run on the cluster: the panel\'s scatter starts detached (here: no login), History lists it, and it ends with every row in order', { timeout: patience(180_000) }, async () => {
    await writeFile(join(workspace, 'cluster.hostfile'), `${sim.lines.join('\n')}\n`);
    await connectFromExplorer(page, 'cluster.hostfile');
    await endpointRows(page, (r) => r.filter((x) => x.description.startsWith('healthy')).length === 2, 60_000);
    await runCommand(page, 'Swarm: Open Panel');
    const app = panelApp(page);
    const asked = ['cluster question 0', 'cluster question 1', 'cluster question 2'];
    await compose(page, asked);
    const before = new Set(readdirSync(env.SWARM_RUNS_DIR!));
    await pollUntil(() => app.locator('#run-detached').isEnabled(), Boolean, 20_000);
    await app.locator('#run-detached').click();
    const started = await pollUntil(() => readdirSync(env.SWARM_RUNS_DIR!).filter((d) => !before.has(d)), (d) => d.length === 1, 60_000);
    const runId = started[0]!;
    const entry = app.locator(`#history-table tbody tr[data-run="detached-${runId}"]`);
    await pollUntil(() => entry.isVisible(), Boolean, 30_000);
    await pollUntil(async () => ((await entry.locator('.run-ended').textContent()) ?? '').trim(), (t) => t === 'done', 60_000);
    await screenshot(page, join(SHOTS, 'detached-run-on-cluster.png'));
    const status = JSON.parse(readFileSync(join(env.SWARM_RUNS_DIR!, runId, 'status.json'), 'utf8'));
    assert.equal(status.exitCode, 0);
    const rows = jsonLines(readFileSync(join(env.SWARM_RUNS_DIR!, runId, 'results.jsonl'), 'utf8'));
    assert.deepEqual(rows.map((r) => [r.index, r.prompt, r.status]), asked.map((p, i) => [i, p, 'ok']));
  });
});

describe('detached runs on the login node in a real VS Code: listed and cancelled over the connected swarm\'s one SSH login (a real sshd)', { skip: skip || (haveSshd ? false : '/usr/sbin/sshd is missing (scripts/install-test-deps.sh)'), timeout: patience(1_300_000) }, () => {
  let root = '';
  let runsDir = '';
  let ws = '';
  let sim: Sim;
  let gate: PacingGate;
  let gated = '';
  const sshd = new TestSshd();
  let server: CodeServer | undefined;
  let wb: Workbench | undefined;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'swarm-detached-ssh-ui-'));
    removeOnExit(root);
    runsDir = join(root, 'login-runs');
    ws = join(root, 'ws');
    await sshd.start();
    sim = await startSim(root, 'hosts', 2, ['--ttft-ms', '20']);
    // Detached runs go through the gate: as far as the test lets them (see the first suite).
    gate = await pacingGate(sim.endpoints);
    gated = join(root, 'gated.hostfile');
    await writeFile(gated, `${gate.lines.join('\n')}\n`);
  });
  after(async () => {
    await wb?.close().catch(() => {});
    await server?.stop().catch(() => {});
    await killAll();
    await gate?.close();
    await sim?.stop();
    await sshd.stop();
    if (root) await rm(root, { recursive: true, force: true, maxRetries: 3 });
  });

  /** Starts a run of `m` prompts (one request at a time, through the gate) detached to the login node with the CLI; its id. */
  const detachToLogin = async (name: string, m: number) => {
    const prompts = join(root, `${name}.txt`);
    await writeFile(prompts, Array.from({ length: m }, (_, i) => `question ${i}`).join('\n'));
    const started = await runCli(['scatter', '--hostfile', gated, '--prompts', prompts, '--no-batch', '--concurrency', '1', '--detach', '--via', sshd.via, '--ssh-config', sshd.clientConfig, '--runs-dir', runsDir], { timeoutMs: 90_000 });
    assert.equal(started.code, 0, started.stderr);
    return started.stdout.trim();
  };
  const on = () => ` · on ${sshd.via}`;
  const followedFile = (id: string) => join(ws, '.swarm', 'detached', `${id}.jsonl`);
  const followedCount = (id: string) => (existsSync(followedFile(id)) ? readFileSync(followedFile(id), 'utf8').split('\n').filter(Boolean).length : 0);
  /** The panel's run bar for detached run `id`, and the count it shows done (-1 when none). */
  const runBar = (page: Page, id: string) => {
    const bar = panelApp(page).locator(`#run-status[data-run="detached-${id}"]`);
    const state = () => bar.getAttribute('data-state', { timeout: patience(2_000) }).catch(() => null);
    const done = async () => Number(((await bar.locator('#progress-done').textContent({ timeout: patience(2_000) }).catch(() => '')) ?? '').replace(/,/g, '') || -1);
    return { bar, state, done };
  };

  test('a run detached to the login node shows with its progress once the swarm is connected through it; Attach follows its rows here; opened in the panel it shows running; Cancel stops it there; Resume finishes it there; one login in all', { timeout: patience(600_000) }, async () => {
    // More prompts than the gate lets through before the cancel (4 × 10), so some are left to cancel and to
    // resume; no more, as Resume sends the rest one at a time (800 took minutes on a loaded machine).
    const M = 100;
    gate.allow(10);
    await mkdir(ws, { recursive: true });
    await writeFile(join(ws, 'cluster.hostfile'), `${sim.lines.join('\n')}\n`);
    const ext = join(root, 'ext');
    await installVsix(packagedVsix(root), ext);
    // The ssh settings are machine settings: in this remote window (code-server's) they are the Remote ones,
    // where the Settings editor writes them (User values of theirs were dropped after some reloads).
    server = await startCodeServer({
      workspace: ws,
      extensionsDir: ext,
      machineSettings: { 'swarmLab.ssh.via': sshd.via, 'swarmLab.ssh.configFile': sshd.clientConfig },
      userSettings: { 'swarmLab.detachedRuns.remoteFolder': runsDir },
    });
    wb = await openWorkbench(server, ws);
    const page = wb.page;
    await waitForSwarmContributions(page);
    const logins = sshd.logins();
    await connectFromExplorer(page, 'cluster.hostfile');
    await endpointRows(page, (r) => r.filter((x) => x.description.startsWith('healthy')).length === 2, 60_000);
    await showActivity(page, 'Swarm').catch(() => {});
    // Started once the window is up (a busy machine takes minutes to start it): the view finds it by itself.
    const id = await detachToLogin('p', M);

    const row = (ok: (description: string) => boolean, timeoutMs = 30_000) => detachedRow(page, server, id, ok, timeoutMs);
    const first = await row((d) => d.startsWith('running · ') && d.endsWith(on()), 60_000);
    gate.allow(10);
    await row((d) => d.startsWith('running · ') && done(d) > done(first));
    await screenshot(page, join(SHOTS, 'detached-4-login-node.png'));

    // Attach, over the same login: its rows so far in a file here, in input order, growing as they land.
    await runCommandPicking(page, 'Swarm: Attach to Detached Run', id);
    assert.equal(await pollUntil(() => activeTabLabel(page), (t) => t === `${id}.jsonl`, 20_000), `${id}.jsonl`);
    const followed = followedFile(id);
    const count = () => followedCount(id);
    const seen = await pollUntil(count, (n) => n > 0, 30_000);
    gate.allow(10);
    await pollUntil(count, (n) => n > seen, 30_000);
    const sofar = jsonLines(readFileSync(followed, 'utf8'));
    assert.deepEqual(sofar.map((r) => r.index), [...sofar.map((r) => r.index)].sort((x, y) => x - y), 'in input order');
    assert.ok(sofar.every((r) => r.prompt === `question ${r.index}`));

    // Opened from History, the panel's run bar says it runs (not done), on its status file's progress.
    await runCommand(page, 'Swarm: Open Panel');
    const entry = await historyEntry(page, id);
    assert.equal(((await entry.locator('[data-detached-where]').textContent()) ?? '').trim(), `on ${sshd.via}`);
    await entry.locator('[data-action="open"]').click();
    const bar = runBar(page, id);
    await pollUntil(bar.state, (x) => x === 'running', 30_000);
    assert.equal(((await bar.bar.locator('#progress-total').textContent()) ?? '').trim(), String(M));
    const shown = await pollUntil(bar.done, (n) => n > 0, 30_000);
    gate.allow(10);
    await pollUntil(bar.done, (n) => n > shown, 30_000);
    await screenshot(page, join(SHOTS, 'detached-5-login-node-panel.png'));
    await showActivity(page, 'Swarm').catch(() => {});

    await actOnRun(page, server, 'Swarm: Cancel Detached Run', id, `cancelling detached run ${id}`);
    await row((d) => d.startsWith('finished (exit 143)') && d.endsWith(on()), 60_000);
    // Every finished row kept, the rest cancelled, in input order, on the login node.
    const rows = jsonLines(readFileSync(join(runsDir, id, 'results.jsonl'), 'utf8'));
    assert.deepEqual(rows.map((r) => r.index), Array.from({ length: M }, (_, i) => i));
    const ok = rows.filter((r) => r.status === 'ok').length;
    assert.ok(ok > 0 && ok < M && rows.filter((r) => r.status === 'cancelled').length === M - ok, `${ok} ok`);
    // The followed file ends as its results file: every row, in input order.
    await pollUntil(() => jsonLines(readFileSync(followed, 'utf8')).map((r) => r.index).join(), (x) => x === rows.map((r) => r.index).join(), 30_000);
    // …and the panel's run bar says how it ended.
    await pollUntil(bar.state, (x) => x === 'cancelled', 30_000);

    // Resume, there: the bundled CLI rides the window's login (its control socket), sends only the cancelled prompts.
    gate.open();
    await actOnRun(page, server, 'Swarm: Resume Detached Run', id, `resuming detached run ${id}`);
    await row((d) => d.startsWith('finished (exit 0)') && d.endsWith(on()), 300_000);
    const resumed = jsonLines(readFileSync(join(runsDir, id, 'results.jsonl'), 'utf8'));
    assert.deepEqual(resumed.map((r) => [r.index, r.prompt, r.status]), Array.from({ length: M }, (_, i) => [i, `question ${i}`, 'ok']));
    // Listing each second, following, cancelling and resuming rode the connection's login: no other (the CLI that detached the run made its own).
    assert.equal(sshd.logins() - logins, 2, 'the window\'s one login, and the detaching CLI\'s');
  });

  test('after a reload (which closes the login) and a connect through the login again, an attached login-node run still going is followed again into its file, with no click', { timeout: patience(420_000) }, async () => {
    const page = wb!.page;
    // Held by the gate through the reload and the connect (it lets 3 × 10 through); cancelled at the end.
    const M = 200;
    gate.hold();
    gate.allow(10);
    const id = await detachToLogin('long', M);
    await showActivity(page, 'Swarm').catch(() => {});
    await detachedRow(page, server, id, (d) => d.startsWith('running · ') && d.endsWith(on()), 60_000);
    await runCommandPicking(page, 'Swarm: Attach to Detached Run', id);
    const count = () => followedCount(id);
    await pollUntil(count, (n) => n > 0, 30_000);

    const rowsBefore = count();
    await page.reload({ waitUntil: 'domcontentloaded', timeout: patience(60_000) });
    await waitForSwarmContributions(page);
    await connectFromExplorer(page, 'cluster.hostfile');
    await endpointRows(page, (r) => r.filter((x) => x.description.startsWith('healthy')).length === 2, 60_000);
    // Through the login again: the reloaded window read its ssh settings as the first did.
    const connects = await pollUntil(() => server!.extensionLog().match(/connected cluster\.hostfile: .*/g) ?? [], (c) => c.length === 2, 30_000);
    assert.ok(connects[1]?.includes(`through ${sshd.via} (`), connects.join('\n'));
    const logins = sshd.logins();
    // Followed again, caught up, each row once, in input order.
    gate.allow(10);
    const rowsAfter = await pollUntil(count, (n) => n > rowsBefore, 60_000);
    gate.allow(10);
    await pollUntil(count, (n) => n > rowsAfter, 30_000);
    const rows = jsonLines(readFileSync(followedFile(id), 'utf8'));
    assert.deepEqual(rows.map((r) => r.index), [...rows.map((r) => r.index)].sort((x, y) => x - y), 'in input order');
    assert.equal(new Set(rows.map((r) => r.index)).size, rows.length, 'each row once');
    assert.ok(rows.length < M && rows.every((r) => r.prompt === `question ${r.index}` && r.status === 'ok'), `${rows.length} rows`);

    await showActivity(page, 'Swarm').catch(() => {});
    // Cancel offers the runs the Detached Runs view lists: after the reload it lists the login's runs again
    // once it has asked the login, which may come after the file is followed again.
    await detachedRow(page, server, id, (d) => d.startsWith('running · ') && d.endsWith(on()), 60_000);
    await actOnRun(page, server, 'Swarm: Cancel Detached Run', id, `cancelling detached run ${id}`);
    await detachedRow(page, server, id, (d) => d.startsWith('finished (exit 143)'), 60_000);
    assert.equal(sshd.logins() - logins, 0, 'following and cancelling rode the connect\'s login');
  });

  test('Run on the cluster through the login: the panel\'s scatter starts detached on the login node by the bundled CLI riding the window\'s login; History lists it there, and it ends with every row in order', { timeout: patience(240_000) }, async () => {
    const page = wb!.page;
    const logins = sshd.logins();
    await runCommand(page, 'Swarm: Open Panel');
    const app = panelApp(page);
    const asked = Array.from({ length: 6 }, (_, i) => `login question ${i}`);
    await compose(page, asked);
    const before = new Set(readdirSync(runsDir));
    await pollUntil(() => app.locator('#run-detached').isEnabled(), Boolean, 20_000);
    await app.locator('#run-detached').click();
    const started = await pollUntil(() => readdirSync(runsDir).filter((d) => !before.has(d)), (d) => d.length === 1, 90_000);
    const runId = started[0]!;
    const entry = await historyEntry(page, runId, 60_000);
    assert.equal(((await entry.locator('[data-detached-where]').textContent()) ?? '').trim(), `on ${sshd.via}`);
    await pollUntil(async () => ((await entry.locator('.run-ended').textContent()) ?? '').trim(), (t) => t === 'done', 90_000);
    await screenshot(page, join(SHOTS, 'detached-run-on-cluster-login.png'));
    const spec = JSON.parse(readFileSync(join(runsDir, runId, 'spec.json'), 'utf8'));
    // The prompts and hostfile travelled through the login into the run's folder there.
    assert.ok(spec.inputs.every((f: { path: string }) => f.path.startsWith(join(runsDir, runId, 'inputs'))), JSON.stringify(spec.inputs));
    const status = JSON.parse(readFileSync(join(runsDir, runId, 'status.json'), 'utf8'));
    assert.equal(status.exitCode, 0);
    const rows = jsonLines(readFileSync(join(runsDir, runId, 'results.jsonl'), 'utf8'));
    assert.deepEqual(rows.map((r) => [r.index, r.prompt, r.status]), asked.map((p, i) => [i, p, 'ok']));
    assert.equal(sshd.logins() - logins, 0, 'it rode the window\'s login');
  });
});

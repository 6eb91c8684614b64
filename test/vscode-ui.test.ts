/**
 * UI tests of the PACKAGED extension (swarm-lab.vsix, installed before code-server starts) in a real
 * VS Code: code-server 4.99.4 (VS Code 1.99.3) driven in headless Chromium with playwright-core. The
 * endpoints are `swarm sim` child processes (test/helpers/cli.ts) and, for the SSH test, a real loopback
 * sshd (test/helpers/sshd.ts). Tests 1–4 share one code-server; the SSH test has its own, with the
 * `swarmLab.ssh.*` user settings and the light theme. Screenshots go to .tmp/screenshots/ui-*.png.
 * Versions with the Swarm Lab panel (they contribute `swarmLab.openPanel`) show a finished run in the
 * panel instead of opening its results file: tests 2 and 3 then expect the panel, and test 2 opens the
 * results file through Quick Open. SWARM_UI_VSIX=<path> tests that .vsix instead of packaging one.
 * Everything started here is stopped in `after`; the last test checks that nothing is left.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { codeServerAvailable, CODE_SERVER_DIR, installVsix, removeOnExit, startCodeServer, type CodeServer } from './helpers/code-server.ts';
import { jsonLines, killAll, ROOT, startSim, type Sim } from './helpers/cli.ts';
import { haveSshd, TestSshd } from './helpers/sshd.ts';
import {
  activeTabLabel,
  connectFromExplorer,
  dismissHover,
  endpointRows,
  endpointsWelcome,
  hoverText,
  liveSsh,
  liveSshOnPort,
  openFromExplorer,
  packagedVsix,
  panelShows,
  pollUntil,
  quickOpenFile,
  seenTexts,
  setColorTheme,
  showActivity,
  swarmStatus,
  swarmStatusText,
  taggedProcesses,
  vsixCommands,
  waitForSwarmContributions,
  watchForText,
  welcomeButtons,
} from './helpers/ui-fixtures.ts';
import { CHROMIUM, notifications, openWorkbench, quickInputType, quickPickSelect, runCommand, screenshot, waitForNotification, type Workbench } from './helpers/workbench.ts';
import type { Page } from 'playwright-core';
import { patience, until } from './helpers/patience.ts';

const SHOTS = join(ROOT, '.tmp', 'screenshots');
const shot = (name: string) => join(SHOTS, `ui-${name}.png`);

const skip = !codeServerAvailable
  ? `code-server is not installed in ${CODE_SERVER_DIR}: run scripts/install-code-server.sh`
  : !existsSync(CHROMIUM)
    ? `${CHROMIUM} is missing: run scripts/install-code-server.sh`
    : false;

// Every process this file starts inherits this tag, so the last test finds exactly ours.
const TAG_VALUE = randomUUID();
const TAG = `SWARM_UI_RUN=${TAG_VALUE}`;
process.env.SWARM_UI_RUN = TAG_VALUE;

const QUESTIONS = Array.from({ length: 12 }, (_, i) => `Question ${i}: what is ${i} + ${i}?`);
const TEN = Array.from({ length: 10 }, (_, i) => `slow or fast ${i}`);

/** `Swarm 2/2`, perhaps with the previous run's wall time, which the item keeps across connections. */
const IDLE_2 = /^Swarm 2\/2( · \d+\.\d\d s)?$/;

type Row = Awaited<ReturnType<typeof endpointRows>>[number];
const allHealthy = (n: number) => (rows: Row[]) => rows.length === n && rows.every((r) => r.description.startsWith('healthy'));

/** The summary row heading the Endpoints view: `3 healthy · 0 degraded · 0 down`. */
const SUMMARY = /^\d+ healthy · \d+ degraded · \d+ down$/;

/** The endpoint rows below the summary row, once `ok`. */
async function endpointsBelowSummary(page: Page, ok: (rows: Row[]) => boolean, timeoutMs?: number): Promise<Row[]> {
  return (await endpointRows(page, (r) => r.length > 0 && SUMMARY.test(r[0]!.label) && ok(r.slice(1)), timeoutMs)).slice(1);
}

/** Scatter results files (`<stamp>-scatter.jsonl`) in the runs folder of `workspace`. */
function runFiles(workspace: string): string[] {
  const dir = join(workspace, '.swarm', 'runs');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('-scatter.jsonl')).sort() : [];
}

describe('Swarm Lab UI in a real VS Code (code-server + Chromium, packaged .vsix)', { skip, timeout: patience(170_000) }, () => {
  let root = '';
  let workspace = '';
  let extensions = '';
  let vsix = '';
  /** Versions with the Swarm Lab panel show a finished run there instead of opening its results file. */
  let panelVersion = false;
  let sims: Sim[] = [];
  let main: Sim;
  let fast: Sim;
  let stuck: Sim;
  let server: CodeServer | undefined;
  let wb: Workbench | undefined;
  let page: Page;
  // The SSH test's own instance.
  let sshd: TestSshd | undefined;
  let sshPort = 0;
  let sshServer: CodeServer | undefined;
  let sshWb: Workbench | undefined;
  const timings: string[] = [];
  const t0 = Date.now();

  /** Runs one test's body; on failure saves a screenshot and adds the browser console to the error. */
  async function step(name: string, p: () => Page | undefined, w: () => Workbench | undefined, body: () => Promise<void>): Promise<void> {
    const started = Date.now();
    try {
      await body();
      timings.push(`${name}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    } catch (e) {
      const page = p();
      const where = shot(`${name}-failure`);
      if (page) await screenshot(page, where).catch(() => {});
      const browserLog = w()?.consoleLog().slice(-20).join('\n') ?? '';
      throw new Error(`${(e as Error).message}\n(screenshot: ${where})\n--- browser console ---\n${browserLog}`, { cause: e });
    }
  }

  let tornDown: Promise<void> | undefined;
  const teardown = () =>
    (tornDown ??= (async () => {
      const errors: unknown[] = [];
      const attempt = async (fn: () => Promise<unknown> | unknown) => {
        try {
          await fn();
        } catch (e) {
          errors.push(e);
        }
      };
      await attempt(() => sshWb?.close());
      await attempt(() => sshServer?.stop());
      await attempt(() => wb?.close());
      await attempt(() => server?.stop());
      // An ssh master forked by -f leaves code-server's process tree: end any that Disconnect did not
      // (ours name our sshd's private client config).
      if (sshd) for (const { pid, args } of liveSsh()) if (args.includes(sshd.clientConfig)) await attempt(() => process.kill(pid, 'SIGTERM'));
      await attempt(() => sshd?.stop());
      await attempt(() => Promise.all(sims.map((s) => s.stop())));
      await attempt(() => killAll());
      if (root) await attempt(() => rm(root, { recursive: true, force: true, maxRetries: 3 }));
      if (errors.length) throw new AggregateError(errors, 'teardown failed');
    })());

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    for (const f of readdirSync(SHOTS)) if (/^ui-.*\.png$/.test(f)) await rm(join(SHOTS, f), { force: true }); // no stale failure shots
    root = await mkdtemp(join(tmpdir(), 'swarm-ui-'));
    removeOnExit(root);
    const packaging = Date.now();
    vsix = packagedVsix(root);
    timings.push(`${process.env.SWARM_UI_VSIX ? 'given .vsix' : 'build + package'}: ${((Date.now() - packaging) / 1000).toFixed(1)} s`);
    panelVersion = vsixCommands(vsix).includes('swarmLab.openPanel');
    workspace = join(root, 'ws');
    extensions = join(root, 'ext');
    await mkdir(workspace, { recursive: true });
    const simDir = join(root, 'sims');
    await mkdir(simDir);
    const started = Date.now();
    const [, ...started3] = await Promise.all([
      installVsix(vsix, extensions),
      startSim(simDir, 'main.hostfile', 3),
      // Answers its own five prompts, then hangs too: the hung endpoint's prompts, sent to it as hedges, never finish either.
      startSim(simDir, 'fast.hostfile', 1, ['--fault-after', '5', '--hang']),
      startSim(simDir, 'hang.hostfile', 1, ['--hang']),
    ]);
    [main, fast, stuck] = started3 as [Sim, Sim, Sim];
    sims = [main, fast, stuck];
    await writeFile(join(workspace, 'swarm.hostfile'), `${main.lines.join('\n')}\n`);
    await writeFile(join(workspace, 'mixed.hostfile'), `${[...fast.lines, ...stuck.lines].join('\n')}\n`);
    await writeFile(join(workspace, 'questions.prompts.txt'), `${QUESTIONS.join('\n')}\n`);
    await writeFile(join(workspace, 'ten.prompts.txt'), `${TEN.join('\n')}\n`);
    server = await startCodeServer({ workspace, extensionsDir: extensions, userSettings: { 'workbench.colorTheme': 'Default Dark Modern' } });
    wb = await openWorkbench(server, workspace);
    page = wb.page;
    await waitForSwarmContributions(page);
    timings.push(`setup (vsix install, 3 sims, code-server, workbench): ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  after(async () => {
    await teardown();
    console.log(`# vscode-ui timings:\n${timings.map((t) => `#   ${t}`).join('\n')}\n#   whole file: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });

  test('1. Explorer → "Connect to Hostfile": one healthy row per endpoint, status bar "Swarm 3/3"', { timeout: patience(60_000) }, () =>
    step('1-connect', () => page, () => wb, async () => {
      await connectFromExplorer(page, 'swarm.hostfile');
      const rows = await endpointsBelowSummary(page, allHealthy(3));
      assert.match((await endpointRows(page, (r) => r.length > 0))[0]!.label, /^3 healthy · 0 degraded · 0 down$/, 'the summary row heads the tree');
      assert.deepEqual(
        rows.map((r) => r.label),
        main.endpoints,
        'one row per endpoint, in hostfile order, labelled host:port',
      );
      for (const r of rows) {
        assert.match(r.description, /^healthy/, `${r.label}: ${r.description}`);
        assert.equal(r.level, 1, 'no role tags: no groups');
      }
      assert.equal(await pollUntil(() => swarmStatusText(page), (t) => t === 'Swarm 3/3', 10_000), 'Swarm 3/3');
      assert.equal(await hoverText(page, swarmStatus(page), /endpoints\shealthy/), 'swarm.hostfile: 3 of 3 endpoints healthy');
      await page.locator('.notifications-toasts .notification-list-item-message', { hasText: /connecting/ }).waitFor({ state: 'hidden', timeout: patience(10_000) });
      await screenshot(page, shot('1-connected-dark'));
      await dismissHover(page);
      await setColorTheme(page, 'Light Modern');
      await hoverText(page, swarmStatus(page), /endpoints\shealthy/);
      await screenshot(page, shot('1-connected-light'));
      await dismissHover(page);
      await setColorTheme(page, 'Dark Modern');
    }));

  test('2. "Swarm: Scatter Prompts" → Batched on questions.prompts.txt: the results open (file, or panel); 12 echoed answers in order on disk', { timeout: patience(60_000) }, () =>
    step('2-scatter', () => page, () => wb, async () => {
      if ((await swarmStatusText(page))?.startsWith('Swarm 3/3') !== true) {
        await connectFromExplorer(page, 'swarm.hostfile');
        await endpointsBelowSummary(page, allHealthy(3));
      }
      await openFromExplorer(page, 'questions.prompts.txt');
      const before = runFiles(workspace);
      await runCommand(page, 'Swarm: Scatter Prompts');
      // No role tags in the hostfile: the first question is "how", not "which endpoints".
      const title = page.locator('.quick-input-widget .quick-input-title');
      assert.equal(await pollUntil(async () => ((await title.textContent()) ?? '').trim(), (t) => t !== '', 10_000), 'Swarm: how to send them?');
      await quickPickSelect(page, 'Batched');
      const notice = await waitForNotification(page, /^Swarm: \d+\/\d+ ok in/, { timeoutMs: 20_000 });
      // Every request the run sent: the three endpoints' model lookups, then one list each.
      assert.match(notice, /^Swarm: 12\/12 ok in \d+\.\d\d s, 6 HTTP requests/);
      const added = runFiles(workspace).filter((f) => !before.includes(f));
      assert.equal(added.length, 1, `one new results file: ${added.join(', ')}`);
      const name = added[0]!;
      assert.match(name, /^\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d-\d{3}-scatter\.jsonl$/);
      const opened = panelVersion ? 'Swarm Lab' : name;
      assert.equal(await pollUntil(() => activeTabLabel(page), (l) => l === opened, 10_000), opened, panelVersion ? 'the panel shows the run' : 'the results file is the active editor');
      const lines = jsonLines(await readFile(join(workspace, '.swarm', 'runs', name), 'utf8'));
      assert.equal(lines.length, 12);
      assert.deepEqual(
        lines.map((l) => l.index),
        QUESTIONS.map((_, i) => i),
      );
      assert.deepEqual(
        lines.map((l) => l.text),
        QUESTIONS.map((q) => `completion: ${q}`),
      );
      assert.deepEqual(new Set(lines.map((l) => l.status)), new Set(['ok']));
      assert.ok(lines.every((l) => main.endpoints.includes(l.endpoint)), 'answered by the connected endpoints');
      assert.match((await pollUntil(() => swarmStatusText(page), (t) => / · /.test(t ?? ''), 5_000)) ?? '', /^Swarm 3\/3 · \d+\.\d\d s$/);
      if (panelVersion) {
        assert.ok(await pollUntil(() => panelShows(page, `completion: ${QUESTIONS[11]}`), Boolean, 10_000), 'the panel lists the answers');
        await screenshot(page, shot('2-results-panel'));
        await quickOpenFile(page, name); // the results file, reached through Quick Open
      }
      await screenshot(page, shot('2-results'));
    }));

  test('3. a long run is cancelled by clicking the status bar: 10 lines, the fast endpoint\'s "ok", the rest "cancelled"', { timeout: patience(60_000) }, () =>
    step('3-cancel', () => page, () => wb, async () => {
      await connectFromExplorer(page, 'mixed.hostfile');
      const rows = await endpointsBelowSummary(page, (r) => allHealthy(2)(r) && r[0]!.label === fast.endpoints[0]);
      assert.deepEqual(
        rows.map((r) => r.label),
        [fast.endpoints[0], stuck.endpoints[0]],
      );
      assert.ok(allHealthy(2)(rows), JSON.stringify(rows));
      // (the last run's wall time stays on the item across connections: ` · 0.01 s`)
      assert.match((await pollUntil(() => swarmStatusText(page), (t) => IDLE_2.test(t ?? ''), 10_000)) ?? '', IDLE_2);
      await openFromExplorer(page, 'ten.prompts.txt');
      const before = runFiles(workspace);
      await runCommand(page, 'Swarm: Scatter Prompts');
      await quickPickSelect(page, 'Individual');
      // The fast endpoint's half finishes at once; the hung one's never does (nor do their hedges on the fast one).
      // The total is known from the start, and the item keeps its "Swarm" label while the run goes.
      const progress = await pollUntil(() => swarmStatusText(page), (t) => /^Swarm 5\/10 · /.test(t ?? ''), 20_000);
      assert.match(progress ?? '', /^Swarm 5\/10 · \d+\.\d s$/);
      const tip = await hoverText(page, swarmStatus(page), /Click\sto\scancel/);
      assert.equal(tip, 'Swarm: scattering 10 prompts (individual): 5 ok, 0 failed. Click to cancel (finished results are kept).');
      await screenshot(page, shot('3-running-tooltip'));
      await swarmStatus(page).click();
      const notice = await waitForNotification(page, /^Swarm: cancelled/, { timeoutMs: 15_000 });
      assert.match(notice, /^Swarm: cancelled — kept 5\/10 ok in /);
      const added = runFiles(workspace).filter((f) => !before.includes(f));
      assert.equal(added.length, 1, `one new results file: ${added.join(', ')}`);
      const opened = panelVersion ? 'Swarm Lab' : added[0];
      assert.equal(await pollUntil(() => activeTabLabel(page), (l) => l === opened, 10_000), opened, panelVersion ? 'the panel shows the run' : 'the results file is the active editor');
      if (panelVersion) assert.ok(await pollUntil(() => panelShows(page, `completion: ${TEN[8]}`), Boolean, 10_000), 'the panel lists the answers');
      const lines = jsonLines(await readFile(join(workspace, '.swarm', 'runs', added[0]!), 'utf8'));
      assert.equal(lines.length, 10);
      assert.deepEqual(
        lines.map((l) => l.index),
        TEN.map((_, i) => i),
      );
      for (const l of lines) {
        if (l.endpoint === fast.endpoints[0]) {
          assert.equal(l.status, 'ok', JSON.stringify(l));
          assert.equal(l.text, `completion: ${TEN[l.index]}`);
        } else assert.equal(l.status, 'cancelled', JSON.stringify(l));
      }
      assert.equal(lines.filter((l) => l.status === 'ok').length, 5, 'the fast endpoint answered its five');
      assert.equal(lines.filter((l) => l.status === 'cancelled').length, 5, 'the hung endpoint\'s five were cancelled');
      // Idle again, with the run's wall time; the hung endpoint counts as healthy only until the run has seen it hang.
      assert.match((await pollUntil(() => swarmStatusText(page), (t) => /^Swarm [12]\/2 · /.test(t ?? ''), 10_000)) ?? '', /^Swarm [12]\/2 · \d+\.\d\d s$/, 'idle again');
      await screenshot(page, shot('3-cancelled'));
    }));

  test('4. nothing connected: the welcome view\'s "Start local simulator" → 2 healthy endpoints and .swarm/simulator.hostfile', { timeout: patience(60_000) }, () =>
    step('4-welcome', () => page, () => wb, async () => {
      if ((await swarmStatusText(page)) !== null) await runCommand(page, 'Swarm: Disconnect'); // (only offered while connected)
      assert.equal(await pollUntil(() => swarmStatusText(page), (t) => t === null, 10_000), null, 'no status bar item while disconnected');
      await showActivity(page, 'Swarm');
      const welcome = endpointsWelcome(page);
      await welcome.waitFor({ state: 'visible', timeout: patience(10_000) });
      assert.match(((await welcome.locator('p').first().textContent()) ?? '').trim(), /^No swarm connected\.$/);
      assert.deepEqual(await welcomeButtons(page), ['Connect a hostfile', 'Launch a swarm on the scheduler', 'Start local simulator']);
      await runCommand(page, 'Notifications: Clear All Notifications');
      await screenshot(page, shot('4-welcome'));
      await welcome.locator('.monaco-button', { hasText: /^\s*Start local simulator\s*$/ }).click();
      const prompt = page.locator('.quick-input-widget .quick-input-message, .quick-input-widget .quick-input-title');
      await prompt.filter({ hasText: /simulat/i }).first().waitFor({ state: 'visible', timeout: patience(10_000) });
      await quickInputType(page, '2');
      const rows = await endpointsBelowSummary(page, allHealthy(2));
      assert.ok(allHealthy(2)(rows), JSON.stringify(rows));
      assert.match((await pollUntil(() => swarmStatusText(page), (t) => IDLE_2.test(t ?? ''), 10_000)) ?? '', IDLE_2);
      const hostfile = join(workspace, '.swarm', 'simulator.hostfile');
      assert.ok(existsSync(hostfile), `${hostfile} exists`);
      const endpoints = (await readFile(hostfile, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t').slice(0, 2).join(':'));
      assert.deepEqual(endpoints, rows.map((r) => r.label), 'the hostfile lists the endpoints the tree shows');
      await screenshot(page, shot('4-simulator'));
    }));

  test('5. SSH: one login through a loopback sshd (terminal "Swarm: SSH login to …"), 2 healthy endpoints; Disconnect ends every ssh', { timeout: patience(90_000), skip: haveSshd ? false : '/usr/sbin/sshd is missing (scripts/install-test-deps.sh)' }, () =>
    step('5-ssh', () => sshWb?.page, () => sshWb, async () => {
      sshd = new TestSshd();
      await sshd.start();
      sshPort = sshd.port;
      const cluster = await startSim(join(root, 'sims'), 'cluster.hostfile', 2);
      sims.push(cluster);
      const ws = join(root, 'ws-ssh');
      const ext = join(root, 'ext-ssh');
      await mkdir(ws, { recursive: true });
      await writeFile(join(ws, 'cluster.hostfile'), `${cluster.lines.join('\n')}\n`);
      await installVsix(vsix, ext);
      sshServer = await startCodeServer({
        workspace: ws,
        extensionsDir: ext,
        machineSettings: { 'swarmLab.ssh.via': sshd.via, 'swarmLab.ssh.configFile': sshd.clientConfig },
        userSettings: { 'workbench.colorTheme': 'Default Light Modern' },
      });
      sshWb = await openWorkbench(sshServer, ws);
      const p = sshWb.page;
      await waitForSwarmContributions(p);
      await watchForText(p, 'Swarm: SSH login to');
      const logins = sshd.logins();
      assert.deepEqual(liveSshOnPort(sshd.port), [], 'no ssh to this sshd before connecting');

      await connectFromExplorer(p, 'cluster.hostfile');
      const seen = await pollUntil(() => seenTexts(p), (s) => s.some((t) => t.includes(`Swarm: SSH login to ${sshd!.via}`)), 20_000);
      assert.ok(seen.some((t) => t.includes(`Swarm: SSH login to ${sshd!.via}`)), `a terminal "Swarm: SSH login to ${sshd.via}" appeared; seen: ${JSON.stringify(seen)}`);
      // Up to 25 s for the tree; but once sshd has logged the login and no ssh master (-M) has run for 3 s,
      // the connection cannot come up (the extension would wait 5 minutes for the master): say so at once.
      let rows: Row[] = [];
      let noMasterSince: number | undefined;
      const failure = async () =>
        `the connection did not come up: sshd accepted ${sshd!.logins() - logins} login(s), the login terminal is gone, ` +
        `live ssh -p ${sshd!.port}: ${JSON.stringify(liveSshOnPort(sshd!.port))} (no master); rows: ${JSON.stringify(rows)}; ` +
        `notifications: ${JSON.stringify(await notifications(p))}`;
      await until(
        async () => {
          rows = await endpointsBelowSummary(p, allHealthy(2), 500);
          if (allHealthy(2)(rows)) return true;
          const master = liveSshOnPort(sshd!.port).some((a) => /\s-M(\s|$)/.test(a));
          if (master || sshd!.logins() === logins) noMasterSince = undefined;
          else noMasterSince ??= Date.now();
          if (noMasterSince !== undefined && Date.now() - noMasterSince > patience(3_000)) assert.fail(await failure());
          return false;
        },
        'the tree to show 2 healthy endpoints',
        25_000,
      ).catch(async (e) => assert.fail(/^timed out/.test((e as Error).message) ? await failure() : (e as Error).message));
      assert.deepEqual(
        rows.map((r) => r.label),
        cluster.endpoints,
        'rows name the real endpoints, not the local ends of the forwards',
      );
      assert.ok(allHealthy(2)(rows), JSON.stringify(rows));
      assert.equal(await pollUntil(() => swarmStatusText(p), (t) => t === 'Swarm 2/2', 10_000), 'Swarm 2/2');
      assert.equal(sshd.logins() - logins, 1, 'exactly one SSH login');
      assert.ok(liveSshOnPort(sshd.port).length >= 1, 'the ssh master runs while connected');
      await p.locator('.notifications-toasts .notification-list-item-message', { hasText: /connecting/ }).waitFor({ state: 'hidden', timeout: patience(10_000) });
      const tip = await hoverText(p, p.locator('.part.sidebar .pane-body .monaco-list-row').nth(1), /reached\svia/);
      assert.match(tip, new RegExp(`^${cluster.endpoints[0]!.replace(/\./g, '\\.')} — healthy`));
      assert.match(tip, /reached via: ssh forward 127\.0\.0\.1:\d+/);
      await screenshot(p, shot('5-ssh-connected-light'));
      await dismissHover(p);

      await runCommand(p, 'Swarm: Disconnect');
      const left = await pollUntil(() => liveSshOnPort(sshd!.port), (l) => l.length === 0, 15_000);
      assert.deepEqual(left, [], 'no live ssh to the login host after Disconnect');
      await showActivity(p, 'Swarm');
      await endpointsWelcome(p).waitFor({ state: 'visible', timeout: patience(10_000) });
      assert.deepEqual(await welcomeButtons(p), ['Connect a hostfile', 'Launch a swarm on the scheduler', 'Start local simulator']);
      assert.equal(sshd.logins() - logins, 1, 'still one login');
      await screenshot(p, shot('5-ssh-disconnected-light'));
    }));

  test('6. nothing this file started is still running', { timeout: patience(30_000) }, async () => {
    await teardown();
    const left = await pollUntil(() => taggedProcesses(TAG), (l) => l.length === 0, 5_000);
    assert.deepEqual(left, []);
    if (sshPort) assert.deepEqual(liveSshOnPort(sshPort), []);
  });
});

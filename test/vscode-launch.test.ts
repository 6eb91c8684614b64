/**
 * "Swarm: Launch Swarm…" in a real VS Code (code-server 4.99.4 + headless Chromium, the packaged .vsix)
 * against a real one-node Slurm on loopback (test/helpers/slurm.ts) whose job starts `swarm sim`
 * servers: the form from the palette, the job queued behind another (its position in the Endpoints
 * view and the status bar), running and connected with its walltime left, a run of 10,000 prompts,
 * the walltime warning's Drain, a window reload that re-attaches the job, and Cancel Job. Screenshots
 * go to .tmp/screenshots/launch-*.png (SWARM_SHOTS=<dir> puts them there instead).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { BIN, jsonLines, killAll, ROOT } from './helpers/cli.ts';
import { codeServerAvailable, CODE_SERVER_DIR, installVsix, removeOnExit, startCodeServer, type CodeServer } from './helpers/code-server.ts';
import { freePorts, slurmUnavailable, TestSlurm } from './helpers/slurm.ts';
import { endpointRows, openFromExplorer, packagedVsix, pollUntil, showActivity, swarmStatusText, waitForSwarmContributions } from './helpers/ui-fixtures.ts';
import { CHROMIUM, openWorkbench, quickInputType, quickPickSelect, runCommand, screenshot, waitForNotification, type Workbench } from './helpers/workbench.ts';
import { patience } from './helpers/patience.ts';

const SHOTS = process.env.SWARM_SHOTS ?? join(ROOT, '.tmp', 'screenshots');
const shot = (name: string) => join(SHOTS, `launch-${name}.png`);
const DRAINED = 'drained: not sent (the run was drained; --resume sends it)';
const PROMPTS = Array.from({ length: 10_000 }, (_, i) => `prompt ${i + 1}`);

const skip = !codeServerAvailable
  ? `code-server is not installed in ${CODE_SERVER_DIR}: run scripts/install-code-server.sh`
  : !existsSync(CHROMIUM)
    ? `${CHROMIUM} is missing: run scripts/install-code-server.sh`
    : (slurmUnavailable ?? false);

type Row = Awaited<ReturnType<typeof endpointRows>>[number];
const JOB_ROW = /^job (\d+) /;

describe('Swarm: Launch Swarm… on a real Slurm, in a real VS Code', { skip, timeout: patience(400_000) }, () => {
  const slurm = new TestSlurm();
  let root = '';
  let workspace = '';
  let server: CodeServer | undefined;
  let wb: Workbench | undefined;
  let page: Page;
  let id = '';
  let portBase = 0;

  async function step(name: string, body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (e) {
      const where = shot(`${name}-failure`);
      if (page) await screenshot(page, where).catch(() => {});
      throw new Error(`${(e as Error).message}\n(screenshot: ${where})\n--- browser console ---\n${wb?.consoleLog().slice(-20).join('\n') ?? ''}`, { cause: e });
    }
  }

  const jobRow = (rows: Row[]) => rows.find((r) => JOB_ROW.test(r.label));

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    for (const f of readdirSync(SHOTS)) if (/^launch-.*\.png$/.test(f)) await rm(join(SHOTS, f), { force: true });
    root = await mkdtemp(join(tmpdir(), 'swarm-launch-ui-'));
    removeOnExit(root);
    const vsix = packagedVsix(root);
    workspace = join(root, 'ws');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, 'big.prompts.txt'), `${PROMPTS.join('\n')}\n`);
    const extensions = join(root, 'ext');
    await Promise.all([installVsix(vsix, extensions), slurm.start()]);
    portBase = await freePorts(2);
    server = await startCodeServer({
      workspace,
      extensionsDir: extensions,
      env: slurm.env,
      userSettings: {
        'workbench.colorTheme': 'Default Dark Modern',
        'swarmLab.launch.scheduler': 'slurm',
        'swarmLab.launch.engine': 'sim',
        'swarmLab.launch.serversPerNode': 2,
        'swarmLab.launch.portBase': portBase,
        'swarmLab.launch.walltime': '10',
        // This very swarm, as the job runs it on the node (the machine's own node and bin/swarm.js).
        'swarmLab.launch.swarmCommand': `${process.execPath} ${BIN}`,
        'swarmLab.launch.pollInterval': 1,
        // The form asks for 4 minutes: the warning comes a minute after the start, while the run goes.
        'swarmLab.launch.warnBefore': 3,
        // Two requests at a time: 10,000 prompts take long enough to be drained half-way.
        'swarmLab.concurrency': 2,
        'swarmLab.batching': false,
      },
    });
    wb = await openWorkbench(server, workspace);
    page = wb.page;
    await waitForSwarmContributions(page);
  });

  after(async () => {
    await wb?.close().catch(() => {});
    await server?.stop().catch(() => {});
    await killAll();
    await slurm.stop();
    if (root) await rm(root, { recursive: true, force: true, maxRetries: 3 });
  });

  test('1. the form from the palette; the job queued behind another, then running, connected, with its walltime left', { timeout: patience(150_000) }, () =>
    step('1-launch', async () => {
      // A job holding every CPU keeps ours queued until it is cancelled.
      const blocker = slurm.client('sbatch', ['--parsable', `--cpus-per-task=${slurm.cpus}`, '--wrap', 'sleep 600']).trim();
      assert.match(blocker, /^\d+$/);
      await runCommand(page, 'Swarm: Launch Swarm…');
      await quickPickSelect(page, 'Walltime');
      await quickInputType(page, '4');
      // Back on the form, with the walltime changed.
      const submit = page.locator('.quick-input-widget .quick-input-list .monaco-list-row').filter({ hasText: 'Submit' }).first();
      await submit.waitFor({ state: 'visible', timeout: patience(10_000) });
      assert.match((await submit.textContent()) ?? '', /1 node\(s\) × 2 sim server\(s\), walltime 4 min 00 s/);
      await screenshot(page, shot('1-form'));
      await quickPickSelect(page, /Submit/);
      const queued = await waitForNotification(page, /queued \(PENDING, (Resources|Priority)\), position 1 in debug/, { timeoutMs: 30_000 });
      assert.match(queued, /^Swarm: job \d+/);
      await showActivity(page, 'Swarm');
      const rows = await endpointRows(page, (r) => /^job \d+ queued · #1 in debug$/.test(jobRow(r)?.label ?? ''), 30_000);
      assert.ok(jobRow(rows), JSON.stringify(rows));
      id = JOB_ROW.exec(jobRow(rows)!.label)![1]!;
      assert.match(jobRow(rows)!.description, /^slurm · 1 node\(s\) asked · 2 sim server\(s\)$/);
      assert.equal(await pollUntil(() => swarmStatusText(page), (t) => t === `Swarm · job ${id} queued · #1 in debug`, 10_000), `Swarm · job ${id} queued · #1 in debug`);
      await screenshot(page, shot('2-queued'));
      slurm.client('scancel', [blocker]);
      // Running: the job wrote its hostfile, the servers answered here, the swarm is connected.
      await waitForNotification(page, new RegExp(`^Swarm: job ${id} ready: 2/2 server\\(s\\) healthy, walltime left \\d+ min \\d\\d s\\.`), { timeoutMs: 60_000 });
      const running = await endpointRows(page, (r) => new RegExp(`^job ${id} running · \\d+ min \\d\\d s left$`).test(jobRow(r)?.label ?? '') && r.filter((x) => x.description.startsWith('healthy')).length === 2, 30_000);
      assert.equal(jobRow(running)!.description, `slurm · ${slurm.node} · 2 sim server(s)`);
      assert.deepEqual(running.filter((r) => /^127\.0\.0\.1:/.test(r.label)).map((r) => r.label).sort(), [`127.0.0.1:${portBase}`, `127.0.0.1:${portBase + 1}`]);
      const status = await pollUntil(() => swarmStatusText(page), (t) => new RegExp(`^Swarm 2/2 · job ${id} running · \\d+ min \\d\\d s left$`).test(t ?? ''), 10_000);
      assert.match(status ?? '', new RegExp(`^Swarm 2/2 · job ${id} running · \\d+ min \\d\\d s left$`), 'the walltime left in the status bar');
      await screenshot(page, shot('3-running'));
      // The same record the CLI keeps: `swarm jobs` lists it.
      const record = JSON.parse(await readFile(join(workspace, '.swarm', 'jobs', readdirSync(join(workspace, '.swarm', 'jobs'))[0]!, 'job.json'), 'utf8'));
      assert.equal(record.id, id);
      assert.deepEqual(record.nodeNames, [slurm.node]);
      assert.ok(record.endsAt, 'the walltime end is recorded once ready');
    }));

  test('2. a run of 10,000 prompts; the walltime warning\'s "Drain Run": what was in flight finished, the rest kept as drained; the run record names the job', { timeout: patience(200_000) }, () =>
    step('2-drain', async () => {
      assert.ok(id, 'test 1 launched the job');
      await openFromExplorer(page, 'big.prompts.txt');
      await runCommand(page, 'Swarm: Scatter Prompts');
      await quickPickSelect(page, 'All endpoints');
      await quickPickSelect(page, 'Individual');
      const during = await pollUntil(() => swarmStatusText(page), (t) => new RegExp(`^Swarm [\\d,]+/10,000 · \\d+\\.\\d s · \\d+ min \\d\\d s left$`).test(t ?? ''), 30_000);
      assert.match(during ?? '', /left$/, 'the walltime left rides the status bar during the run');
      await screenshot(page, shot('4-run-walltime'));
      const warning = page.locator('.notifications-toasts .notification-list-item').filter({ hasText: `job ${id} reaches its walltime` }).first();
      await warning.waitFor({ state: 'visible', timeout: patience(60_000) });
      await screenshot(page, shot('5-walltime-warning'));
      await warning.locator('.monaco-button', { hasText: 'Drain Run' }).click();
      const done = await waitForNotification(page, /^Swarm: drained — kept /, { timeoutMs: 60_000 });
      assert.match(done, /^Swarm: drained — kept [\d,]+\/10,000 ok in \d+\.\d\d s, [\d,]+ HTTP requests; [\d,]+ not sent/);
      const runs = join(workspace, '.swarm', 'runs');
      const file = readdirSync(runs).find((f) => f.endsWith('-scatter.jsonl'))!;
      const lines = jsonLines(await readFile(join(runs, file), 'utf8'));
      assert.equal(lines.length, 10_000);
      assert.deepEqual(lines.map((l) => l.index), PROMPTS.map((_, i) => i));
      const ok = lines.filter((l) => l.status === 'ok');
      const drained = lines.filter((l) => l.status === 'cancelled');
      assert.ok(ok.length > 0 && drained.length > 0, `${ok.length} ok, ${drained.length} drained`);
      assert.equal(ok.length + drained.length, 10_000, 'nothing failed: the requests in flight finished');
      assert.ok(drained.every((l) => l.error === DRAINED));
      assert.ok(ok.every((l) => l.text === `completion: ${l.prompt}`));
      const record = JSON.parse(await readFile(join(runs, file.replace(/\.jsonl$/, '.run.json')), 'utf8'));
      assert.deepEqual(record.record.context.job, { id, scheduler: 'slurm', name: record.record.context.job.name, nodes: [slurm.node], template: record.record.context.job.template });
      assert.match(record.record.context.job.template, /templates\/jobs\/slurm\.sh$/);
      // History says what each run ran on: here, the job.
      const app = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
      const context = app.locator('#history-table tbody tr .run-context').first();
      // The panel shows the finished run (its Results) once it has it; a click before that, or while it
      // paints 10,000 rows, may be lost or undone: clicked again until History shows.
      const showHistory = () =>
        pollUntil(
          async () => {
            if (!(await context.isVisible())) await app.locator('vscode-tab-header', { hasText: 'History' }).first().click({ timeout: patience(2_000) });
            return context.isVisible();
          },
          Boolean,
          30_000,
          500,
        );
      assert.ok(await showHistory(), 'the History tab shows the run');
      assert.match((await context.textContent()) ?? '', new RegExp(`job ${id} · ${record.record.context.job.name} · slurm job ${id} on ${slurm.node} \\(slurm\\.sh\\) · 2 endpoints`));
      assert.equal(((await app.locator('#history-table tbody tr .run-ended').first().textContent()) ?? '').trim(), 'drained');
      assert.ok(await showHistory(), 'History still shows');
      await screenshot(page, shot('5b-history'));
    }));

  test('3. a reloaded window re-attaches the job: its row, its servers connected, its walltime; then Cancel Job ends it', { timeout: patience(120_000) }, () =>
    step('3-reattach', async () => {
      assert.ok(id, 'test 1 launched the job');
      await page.reload();
      await waitForSwarmContributions(page);
      // The reloaded window shows the Swarm view again by itself (its activity item may be busy with a progress badge).
      await showActivity(page, 'Swarm').catch(() => {});
      const rows = await endpointRows(page, (r) => new RegExp(`^job ${id} running · \\d+ min \\d\\d s left$`).test(jobRow(r)?.label ?? '') && r.filter((x) => x.description.startsWith('healthy')).length === 2, 60_000);
      assert.ok(jobRow(rows), JSON.stringify(rows));
      assert.match((await pollUntil(() => swarmStatusText(page), (t) => new RegExp(`^Swarm 2/2( · \\d+\\.\\d\\d s)? · job ${id} running`).test(t ?? ''), 20_000)) ?? '', new RegExp(`job ${id} running · \\d+ min \\d\\d s left$`));
      await screenshot(page, shot('6-reattached'));
      await runCommand(page, 'Swarm: Cancel Job');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ state: 'visible', timeout: patience(10_000) });
      assert.match((await dialog.textContent()) ?? '', new RegExp(`Cancel job ${id} \\(slurm\\)\\?`));
      await dialog.locator('.monaco-button', { hasText: 'Cancel Job' }).click();
      await waitForNotification(page, new RegExp(`^Swarm: cancelled job ${id}\\.`), { timeoutMs: 30_000 });
      const ended = await endpointRows(page, (r) => r.length === 1 && new RegExp(`^job ${id} (cancelled|gone)`).test(r[0]!.label), 30_000);
      assert.match(ended[0]!.label, new RegExp(`^job ${id} (cancelled|gone)$`), 'the swarm is disconnected; the job row says how it ended');
      await screenshot(page, shot('7-cancelled'));
      // Nothing left: Slurm has no job of ours, and the servers are gone.
      await pollUntil(() => slurm.client('squeue', ['-h', '-o', '%i']).trim(), (q) => q === '', 30_000);
      assert.equal(slurm.client('squeue', ['-h', '-o', '%i']).trim(), '');
    }));
});

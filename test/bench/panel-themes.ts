/**
 * The contrast of every status colour of the panel in a real VS Code (code-server, the packaged
 * extension), in Light Modern, Dark Modern and both High Contrast themes: the same texts the harness
 * test (webview-a11y.test.ts) measures against copies of the themes' variables, here read from what
 * VS Code itself renders. Two runs on the local simulator put every status on show: a streamed
 * batch cancelled midway (ok, cancelled, an endpoint down) and a comparison with a failing endpoint
 * (failed, the better value, lost prompts). Prints one line per theme and text; screenshots go to
 * SHOTS (default /tmp/shots21). A measurement, not a test:
 *   node --import tsx test/bench/panel-themes.ts
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame, FrameLocator, Page } from 'playwright-core';
import { startSim, type Sim } from '../helpers/cli.ts';
import { installVsix, startCodeServer, type CodeServer } from '../helpers/code-server.ts';
import { until } from '../helpers/patience.ts';
import { connectFromExplorer, packagedVsix } from '../helpers/ui-fixtures.ts';
import { openWorkbench, quickInputType, quickPickSelect, runCommand, screenshot, statusBarItem, type Workbench } from '../helpers/workbench.ts';
import { contrastOf, STATUS_TEXT } from '../webview-harness/contrast.ts';

declare const document: { body: { classList: { contains(c: string): boolean } } };

const SHOTS = process.env.SHOTS ?? '/tmp/shots21';
/** Each theme's label in "Preferences: Color Theme" and the class VS Code gives the webview's body in it. */
const THEMES: Array<[label: string, bodyClass: string, slug: string]> = [
  ['Light Modern', 'vscode-light', 'light'],
  ['Dark Modern', 'vscode-dark', 'dark'],
  ['Dark High Contrast', 'vscode-high-contrast', 'hc'],
  ['Light High Contrast', 'vscode-high-contrast-light', 'hc-light'],
];

const panelFrame = (page: Page): FrameLocator => page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
const text = async (app: FrameLocator, selector: string) => ((await app.locator(selector).first().textContent().catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();

async function setTheme(page: Page, app: FrameLocator, label: string, bodyClass: string): Promise<Frame> {
  const frame = (await (await app.locator('#run-status').elementHandle())!.ownerFrame())!;
  const applied = () => frame.evaluate((c) => document.body.classList.contains(c) && (c !== 'vscode-high-contrast' || !document.body.classList.contains('vscode-high-contrast-light')), bodyClass);
  for (let attempt = 0; attempt < 3 && !(await applied()); attempt++) {
    await runCommand(page, 'Preferences: Color Theme');
    // Filtered first: the list draws only the rows in view, and the High Contrast themes are last.
    await quickInputType(page, label, { enter: false });
    await quickPickSelect(page, new RegExp(`^${label}`));
    await until(applied, `the ${label} theme in the panel`, 10_000).catch(() => undefined);
  }
  if (!(await applied())) throw new Error(`${label} did not apply`);
  // The panel draws again on the body's class change; two frames later it shows the theme.
  await frame.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
  return frame;
}
declare const requestAnimationFrame: (f: () => void) => number;

async function measure(page: Page, app: FrameLocator, which: string, texts: string[], before?: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  for (const [label, bodyClass, slug] of THEMES) {
    const frame = await setTheme(page, app, label, bodyClass);
    await before?.();
    for (const what of texts) {
      const m = await contrastOf(frame, STATUS_TEXT[what]!);
      lines.push(`${label.padEnd(20)} ${what.padEnd(28)} ${m ? `${m.fg} on ${m.bg} = ${m.ratio.toFixed(2)}:1${m.ratio < 4.5 ? '  UNDER 4.5' : ''}` : '(not on show)'}`);
    }
    await screenshot(page, join(SHOTS, `contrast-${which}-${slug}.png`));
  }
  return lines;
}

async function main(): Promise<void> {
  await mkdir(SHOTS, { recursive: true });
  const dir = await mkdtemp(join(tmpdir(), 'swarm-panel-themes-'));
  const sims: Sim[] = [];
  let server: CodeServer | undefined;
  let wb: Workbench | undefined;
  try {
    const vsix = packagedVsix(dir);
    const extensionsDir = join(dir, 'extensions');
    await installVsix(vsix, extensionsDir);
    const workspace = join(dir, 'ws');
    await mkdir(workspace);
    await writeFile(join(workspace, 'README.md'), '# themes\n');
    const simDir = join(dir, 'sims');
    await mkdir(simDir);
    const good = await startSim(simDir, 'good.hostfile', 3);
    const bad = await startSim(simDir, 'bad.hostfile', 1, ['--fault-rate', '1', '--fault-status', '400']);
    const slow = await startSim(simDir, 'slow.hostfile', 2, ['--reply', 'lorem', '--tpot-ms', '40', '--answer-tokens', '150']);
    sims.push(good, bad, slow);
    const dead = '127.0.0.1\t9'; // the discard port: nothing listens on loopback
    await writeFile(join(workspace, 'slow.hostfile'), `${[...slow.lines, dead].join('\n')}\n`);
    await writeFile(join(workspace, 'flaky.hostfile'), `${[...good.lines, ...bad.lines].join('\n')}\n`);
    server = await startCodeServer({ workspace, extensionsDir, userSettings: { 'workbench.colorTheme': 'Default Dark Modern' } });
    wb = await openWorkbench(server, workspace, { viewport: { width: 1400, height: 900 } });
    const page = wb.page;

    // Run 1: a streamed batch on two slow endpoints (a third down), cancelled midway: ok and cancelled rows.
    await connectFromExplorer(page, 'slow.hostfile');
    await statusBarItem(page, /Swarm 2\/3/, { timeoutMs: 60_000 });
    await runCommand(page, 'Notifications: Clear All Notifications');
    await runCommand(page, 'Swarm: Open Panel');
    const app = panelFrame(page);
    const tab = (name: string) => app.locator('vscode-tab-header', { hasText: name }).first();
    await until(async () => /3 endpoints/.test(await text(app, '.conn')), 'the slow swarm in the panel', 60_000);
    await tab('Compose').click();
    await app.locator('#pattern input[value="scatter"]').click();
    for (let i = 0; i < 16; i++) {
      await app.locator('#add-prompt').click();
      await app.locator('#prompt-editor textarea').fill(`Tell me a long story, number ${i + 1}`);
    }
    await app.locator('#max-tokens input').fill('400');
    await app.locator('#run').click();
    await until(async () => (await app.locator('#run-status').getAttribute('data-state')) === 'running' && Number(await text(app, '#progress-done')) >= 3, 'answers streaming in', 120_000);
    await app.locator('#cancel').click();
    await until(async () => (await app.locator('#run-status').getAttribute('data-state')) === 'cancelled', 'the cancelled run', 60_000);
    await tab('Results').click();
    await runCommand(page, 'Notifications: Clear All Notifications');
    const lines = await measure(page, app, 'cancelled', ['ok (table)', 'ok (run bar)', 'cancelled (run bar)', 'cancelled (results)', 'down (top bar)', 'description text']);

    // Run 2: a comparison on a swarm with an endpoint that refuses every generation: failed rows, the better value, lost prompts.
    await setTheme(page, app, 'Dark Modern', 'vscode-dark');
    await connectFromExplorer(page, 'flaky.hostfile');
    await statusBarItem(page, /Swarm 4\/4/, { timeoutMs: 60_000 });
    await until(async () => /All 4 endpoints/.test(await text(app, '#endpoint-count')), 'the flaky swarm in the panel', 60_000).catch(async () => {
      await tab('Compose').click();
      await until(async () => /All 4 endpoints/.test(await text(app, '#endpoint-count')), 'the flaky swarm in the panel', 60_000);
    });
    await tab('Compose').click();
    await app.locator('#clear-prompts').click();
    for (let i = 0; i < 8; i++) {
      await app.locator('#add-prompt').click();
      await app.locator('#prompt-editor textarea').fill(`Question ${i + 1}`);
    }
    if (!(await app.locator('#compare-toggle').evaluate((e) => (e as unknown as { checked: boolean }).checked))) await app.locator('#compare-toggle').click();
    await app.locator('#rounds input').fill('2');
    const before = await app.locator('#run-status').getAttribute('data-run');
    await app.locator('#run').click();
    await until(async () => (await app.locator('#run-status').getAttribute('data-run')) !== before && (await app.locator('#run-status').getAttribute('data-state')) === 'done', 'the comparison to end', 180_000);
    await runCommand(page, 'Notifications: Clear All Notifications');
    lines.push(
      ...(await measure(page, app, 'comparison-results', ['ok (table)', 'failed (table)', 'failed answer (table)', 'failed (run bar)', 'description text'], async () => {
        await tab('Results').click();
        await app.locator('#results-table .s-failed').first().waitFor();
      })),
    );
    lines.push(
      ...(await measure(page, app, 'comparison', ['better value (comparison)', 'lost prompts (comparison)'], async () => {
        await app.locator('vscode-tab-header[data-tab="compare"]').click();
        await app.locator('#compare-figures').first().waitFor();
      })),
    );
    console.log(`panel status colours in code-server ${server ? '4.99.4' : ''} (load ${loadavg().map((l) => l.toFixed(1)).join(' ')}):\n${lines.sort().join('\n')}`);
  } finally {
    await wb?.close();
    await server?.stop();
    await Promise.all(sims.map((s) => s.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}

await main();

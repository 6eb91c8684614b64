/**
 * Small additions to test/helpers/workbench.ts for the Swarm Lab UI tests (test/vscode-ui.test.ts): the
 * packaged .vsix, the Swarm activity-bar view and its welcome content, hovers, colour themes, a DOM
 * watcher for short-lived elements, polling, and process checks (`ps`, /proc).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { ROOT } from './cli.ts';
import { explorerContextMenu, quickPickSelect, runCommand, treeRows, type TreeRow } from './workbench.ts';
import { patience, until } from './patience.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------
// The packaged extension

/** Whether `vsix` carries exactly the bundles now in dist/ and the current package.json. */
function vsixIsCurrent(vsix: string): boolean {
  try {
    const entries = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).split('\n').filter((e) => e.startsWith('extension/dist/') && !e.endsWith('/'));
    if (!entries.includes('extension/dist/extension.cjs')) return false;
    const inVsix = (entry: string) => execFileSync('unzip', ['-p', vsix, entry], { maxBuffer: 64 << 20 });
    const same = (entry: string, file: string) => existsSync(file) && inVsix(entry).equals(readFileSync(file));
    return (
      entries.every((e) => same(e, join(ROOT, e.slice('extension/'.length)))) &&
      JSON.stringify(JSON.parse(inVsix('extension/package.json').toString())) === JSON.stringify(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')))
    );
  } catch {
    return false;
  }
}

/**
 * The packaged extension: what `npm run package` does (`npm run build`, then `vsce package
 * --no-dependencies`), written into `outDir` instead of the shared swarm-lab.vsix so that test files
 * packaging side by side never race on one file; checked to hold the very bundles in dist/ (another
 * test file may rebuild them meanwhile: then again). SWARM_UI_VSIX=<path> uses that .vsix instead.
 */
export function packagedVsix(outDir: string): string {
  if (process.env.SWARM_UI_VSIX) return process.env.SWARM_UI_VSIX;
  const vsix = join(outDir, 'swarm-lab.vsix');
  let out = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`npm run build failed (exit ${built.status}):\n${built.stdout}${built.stderr}`);
    const packed = spawnSync(join(ROOT, 'node_modules', '.bin', 'vsce'), ['package', '--no-dependencies', '--out', vsix], { cwd: ROOT, encoding: 'utf8' });
    out = `${packed.stdout}${packed.stderr}`;
    if (packed.status !== 0) throw new Error(`vsce package failed (exit ${packed.status}):\n${out}`);
    if (vsixIsCurrent(vsix)) return vsix;
  }
  throw new Error(`${vsix} does not hold the bundles in dist/ after 3 tries:\n${out}`);
}

/** The `contributes.commands` ids of a .vsix. */
export function vsixCommands(vsix: string): string[] {
  const manifest = JSON.parse(execFileSync('unzip', ['-p', vsix, 'extension/package.json'], { encoding: 'utf8' })) as { contributes?: { commands?: Array<{ command: string }> } };
  return (manifest.contributes?.commands ?? []).map((c) => c.command);
}

// ---------------------------------------------------------------------------------------------------
// Polling

/**
 * Calls `probe` until `ok(value)` holds or `timeoutMs` passes; returns the last value either way so the
 * caller's assertion shows what was there. Probe errors count as "not yet". The wait is patience.ts's
 * `until` (the one polling loop), so the limit stretches on a loaded machine.
 */
export async function pollUntil<T>(probe: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs: number, intervalMs = 150): Promise<T> {
  let last: T | undefined;
  let lastError: unknown;
  let answered = false;
  let timedOut: unknown;
  const settled = await until(
    async () => {
      try {
        last = await probe();
        answered = true;
        lastError = undefined;
        return ok(last);
      } catch (e) {
        lastError = e;
        return false;
      }
    },
    'a condition',
    timeoutMs,
    { intervalMs },
  ).catch((e: unknown) => {
    timedOut = e;
    return false;
  });
  if (!settled && last === undefined && lastError) throw lastError;
  // No probe ever answered (one hung): there is no last value to give.
  if (!settled && !answered) throw timedOut;
  return last as T;
}

// ---------------------------------------------------------------------------------------------------
// Workbench parts

/** An activity-bar entry by the start of its label ("Explorer", "Swarm"). */
export function activity(page: Page, label: string): Locator {
  return page.locator('.part.activitybar .action-item').filter({ has: page.locator(`a.action-label[aria-label^="${label}"]`) }).first();
}

/** Waits until the workbench knows the extension's contributions (its activity-bar entry is there). */
export async function waitForSwarmContributions(page: Page, timeoutMs = 30_000): Promise<void> {
  await activity(page, 'Swarm').waitFor({ state: 'visible', timeout: patience(timeoutMs) });
}

/** Shows an activity-bar container (a click on the one already showing would hide the side bar). */
export async function showActivity(page: Page, label: string): Promise<void> {
  const item = activity(page, label);
  for (let i = 0; i < 3; i++) {
    if ((await item.getAttribute('class'))?.split(/\s+/).includes('checked') && (await page.locator('.part.sidebar').isVisible())) return;
    await item.click({ timeout: patience(3_000) });
    await pollUntil(() => item.getAttribute('class'), (c) => Boolean(c?.split(/\s+/).includes('checked')), 2_000, 100);
  }
  if (!(await item.getAttribute('class'))?.split(/\s+/).includes('checked')) throw new Error(`activity ${label} did not open`);
}

/**
 * Right-click → "Connect to Hostfile" on `fileName` in the Explorer, shown before each try (connecting
 * focuses the Swarm view, and a reloaded window may show the view it showed last once its activity bar is
 * restored). Just after a load or a reload the workbench may not know the extension's menus yet (its
 * activity-bar entry is restored from the last session before that): explorerContextMenu draws the menu
 * again until the entry is there.
 */
export async function connectFromExplorer(page: Page, fileName: string): Promise<void> {
  await explorerContextMenu(page, fileName, 'Connect to Hostfile', { timeoutMs: 60_000, reveal: () => showActivity(page, 'Explorer') });
}

/** Opens `fileName` (top level) from the Explorer and waits until its editor tab is the active one. */
export async function openFromExplorer(page: Page, fileName: string): Promise<void> {
  await showActivity(page, 'Explorer');
  const { explorerRow } = await import('./workbench.ts');
  for (let attempt = 0; attempt < 3; attempt++) {
    await explorerRow(page, fileName).click({ timeout: patience(5_000) });
    const tab = await pollUntil(() => activeTabLabel(page), (l) => l === fileName, 5_000);
    if (tab === fileName) return;
  }
  throw new Error(`${fileName} did not open in an editor (active tab: ${await activeTabLabel(page)})`);
}

/** Opens a workspace file by name through Quick Open (Ctrl+P) and waits until its tab is the active one. */
export async function quickOpenFile(page: Page, fileName: string): Promise<void> {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  let last: unknown;
  for (let attempt = 0; attempt < 4; attempt++) {
    try {
      if (attempt > 0) {
        await page.keyboard.press('Escape');
        await sleep(300 * attempt);
      }
      await page.locator('.monaco-workbench').focus().catch(() => {});
      await page.keyboard.press('Control+P');
      await input.waitFor({ state: 'visible', timeout: patience(5_000) });
      await input.fill(fileName);
      const row = page
        .locator('.quick-input-widget .quick-input-list .monaco-list-row')
        .filter({ has: page.locator('.label-name', { hasText: fileName }) })
        .first();
      await row.waitFor({ state: 'visible', timeout: patience(5_000) });
      await row.click({ timeout: patience(2_000) });
      if ((await pollUntil(() => activeTabLabel(page), (l) => l === fileName, 5_000)) === fileName) return;
      throw new Error(`${fileName} is not the active editor after Quick Open`);
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

/** Whether the Swarm Lab panel (a webview) shows `text` somewhere on its page. */
export async function panelShows(page: Page, text: string): Promise<boolean> {
  const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  return (await frame.getByText(text, { exact: false }).count().catch(() => 0)) > 0;
}

/** The label of the active editor tab of the active group, or null. */
export async function activeTabLabel(page: Page): Promise<string | null> {
  const tab = page.locator('.part.editor .editor-group-container.active .tab.active .label-name').first();
  return (await tab.count()) ? ((await tab.textContent()) ?? '').trim() : null;
}

/** Labels of every open editor tab. */
export async function tabLabels(page: Page): Promise<string[]> {
  return (await page.locator('.part.editor .tab .label-name').allTextContents()).map((s) => s.trim());
}

const STATUS_ID = 'swarm-lab.swarm-lab.swarmLab.status';

/** The Swarm status bar item (extension `swarm-lab.swarm-lab`, id `swarmLab.status`). */
export function swarmStatus(page: Page): Locator {
  return page.locator(`.part.statusbar .statusbar-item[id="${STATUS_ID}"]`);
}

/** Its text (codicons excluded), or null while it is hidden; read in one go (the item may go meanwhile). */
export async function swarmStatusText(page: Page): Promise<string | null> {
  return (await page.evaluate(`(() => {
    const el = document.getElementById(${JSON.stringify(STATUS_ID)});
    if (!el || !el.closest('.part.statusbar') || el.offsetParent === null || getComputedStyle(el).visibility === 'hidden') return null;
    return (el.textContent ?? '').trim();
  })()`)) as string | null;
}

/**
 * Every text the Swarm status bar item shows from now on, recorded inside the page as the DOM changes.
 * A poll from the test can miss a short-lived text when the workbench is busy; the page's own observer cannot.
 */
export async function recordStatusTexts(page: Page): Promise<() => Promise<string[]>> {
  const key = `__swarmStatusTexts${Date.now()}`;
  await page.evaluate(`(() => {
    const seen = window[${JSON.stringify(key)}] = [];
    const read = () => {
      const el = document.getElementById(${JSON.stringify(STATUS_ID)});
      const text = el ? (el.textContent ?? '').trim() : null;
      if (text !== null && seen[seen.length - 1] !== text) seen.push(text);
    };
    read();
    new MutationObserver(read).observe(document.body, { subtree: true, childList: true, characterData: true });
  })()`);
  return async () => (await page.evaluate(`window[${JSON.stringify(key)}]`)) as string[];
}

/** Rows of the Endpoints view, polled until `ok` holds (returns the last rows otherwise). */
export async function endpointRows(page: Page, ok: (rows: Array<Omit<TreeRow, 'locator'>>) => boolean, timeoutMs = 20_000): Promise<Array<Omit<TreeRow, 'locator'>>> {
  return pollUntil(
    async () => (await treeRows(page, 'Endpoints', { minRows: 0, timeoutMs: 1_000 }).catch(() => [])).map(({ locator: _, ...r }) => r),
    ok,
    timeoutMs,
    250,
  );
}

/** The welcome content of the Endpoints view (shown while nothing is connected). */
export function endpointsWelcome(page: Page): Locator {
  return page.locator('.part.sidebar .pane-body .welcome-view .welcome-view-content').first();
}

/** Labels of the welcome content's buttons. */
export async function welcomeButtons(page: Page): Promise<string[]> {
  return (await endpointsWelcome(page).locator('.monaco-button').allTextContents()).map((s) => s.trim());
}

/**
 * Hovers `target` and returns the text of the workbench hover that opens, non-breaking spaces made plain
 * (MarkdownString.appendText turns spaces into &nbsp;). Write `expect` with `\s` (it matches U+00A0).
 */
export async function hoverText(page: Page, target: Locator, expect?: RegExp): Promise<string> {
  const hover = page.locator('.monaco-hover.workbench-hover, .workbench-hover').filter({ hasText: expect ?? /\S/ }).first();
  let last: unknown;
  for (let attempt = 0; attempt < 4; attempt++) {
    try {
      await page.mouse.move(700, 400);
      await target.hover({ timeout: patience(3_000) });
      await hover.waitFor({ state: 'visible', timeout: patience(4_000) });
      return ((await hover.textContent()) ?? '').replace(/\u00a0/g, ' ').trim();
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

/** Moves the mouse off any hover target and waits for hovers to go. */
export async function dismissHover(page: Page): Promise<void> {
  await page.mouse.move(700, 400);
  await page.keyboard.press('Escape');
  await page.locator('.workbench-hover').first().waitFor({ state: 'hidden', timeout: patience(3_000) }).catch(() => {});
}

/** Switches the colour theme through "Preferences: Color Theme" and waits for the workbench to repaint in it. */
export async function setColorTheme(page: Page, label: 'Light Modern' | 'Dark Modern'): Promise<void> {
  const kind = label.startsWith('Light') ? 'vs' : 'vs-dark';
  const applied = () => page.evaluate(`document.querySelector('.monaco-workbench').classList.contains(${JSON.stringify(kind)})`) as Promise<boolean>;
  for (let attempt = 0; attempt < 3 && !(await applied()); attempt++) {
    await runCommand(page, 'Preferences: Color Theme');
    await quickPickSelect(page, label);
    await pollUntil(applied, Boolean, 5_000);
  }
  if (!(await applied())) throw new Error(`colour theme ${label} did not apply`);
}

/**
 * Records, from now on, every text the page shows that contains `needle` (in added nodes, changed text,
 * or aria-label/title attributes), so an element that lives only briefly (a terminal that closes itself)
 * is still seen. Read them with `seenTexts`.
 */
export async function watchForText(page: Page, needle: string): Promise<void> {
  await page.evaluate(`(() => {
    const needle = ${JSON.stringify(needle)};
    const seen = (window.__swarmSeen ??= new Set());
    const look = (node) => {
      const el = node.nodeType === 1 ? node : node.parentElement;
      if (!el) return;
      for (const a of ['aria-label', 'title']) { const v = el.getAttribute(a); if (v && v.includes(needle)) seen.add(v.trim()); }
      const t = el.textContent;
      if (t && t.includes(needle) && t.length < 2000) seen.add(t.trim());
    };
    window.__swarmObserver?.disconnect();
    window.__swarmObserver = new MutationObserver((records) => {
      for (const r of records) {
        look(r.target);
        for (const n of r.addedNodes) {
          look(n);
          if (n.nodeType === 1) for (const e of n.querySelectorAll('[aria-label], [title]')) look(e);
        }
      }
    });
    window.__swarmObserver.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['aria-label', 'title'] });
    for (const e of document.querySelectorAll('[aria-label], [title]')) look(e);
  })()`);
}

export async function seenTexts(page: Page): Promise<string[]> {
  return (await page.evaluate(`[...(window.__swarmSeen ?? [])]`)) as string[];
}

// ---------------------------------------------------------------------------------------------------
// Processes

/** Live (not zombie) `ssh` client processes, from `ps -eo pid=,stat=,args=`. */
export function liveSsh(): Array<{ pid: number; args: string }> {
  return execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => Boolean(m) && !m![2]!.startsWith('Z'))
    .map((m) => ({ pid: Number(m[1]), args: m[3]!.trim() }))
    .filter(({ args }) => /^(\S*\/)?ssh(\s|$)/.test(args));
}

/** Command lines of the live `ssh` processes that contain `-p <port>`. */
export function liveSshOnPort(port: number): string[] {
  const flag = new RegExp(`\\s-p\\s+${port}(\\s|$)`);
  return liveSsh()
    .filter(({ args }) => flag.test(args))
    .map(({ args }) => args);
}

/** Pids of every process (not this one) with `tag` (NAME=value) in its environment, and not a zombie. */
export function taggedProcesses(tag: string): Array<{ pid: number; cmd: string }> {
  const out: Array<{ pid: number; cmd: string }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || +name === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))) continue;
      if (!readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(tag)) continue;
      out.push({ pid: +name, cmd: readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 200) });
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

/**
 * Driving code-server's workbench in headless Debian Chromium with playwright-core (shared notes,
 * testing-offline §1c/§1d/§4). Every helper retries with short per-try timeouts instead of Playwright's
 * 30 s default, because the workbench moves focus and renders lazily.
 */
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { pidsMentioning, removeOnExit, type CodeServer } from './code-server.ts';
import { patience, until } from './patience.ts';

export const CHROMIUM = process.env.SWARM_CHROMIUM || '/usr/bin/chromium';

/** Headless, and nothing that reaches for the network this machine does not have (notes, testing-offline §1c). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-crash-reporter',
  '--disable-breakpad',
  '--disable-dev-shm-usage',
];

/** Debian Chromium with a private profile in `dir` and a private HOME (it writes ~/.config and ~/.cache). */
export function launchChromium(dir: string, home: string, viewport = { width: 1280, height: 800 }): Promise<BrowserContext> {
  return chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache') },
    viewport,
    timeout: patience(30_000),
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface Workbench {
  page: Page;
  context: BrowserContext;
  /** Browser console lines so far ("type: text"). */
  consoleLog(): string[];
  /** Closes Chromium, makes sure none of its processes is left, removes its profile and HOME. */
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Load this extension folder as in an Extension Development Host (payload extensionDevelopmentPath). */
  extensionDevelopmentPath?: string;
  /** With extensionDevelopmentPath: a CommonJS file exporting run(); the window exits when it settles. */
  extensionTestsPath?: string;
  /** Called with the page before navigation (e.g. page.exposeFunction). */
  beforeGoto?: (page: Page) => Promise<unknown>;
  /** Wait until the workbench and its explorer are rendered; default true. */
  waitForWorkbench?: boolean;
  viewport?: { width: number; height: number };
}

/** `http://host/?folder=…&payload=…` with paths as vscode-remote:// URIs of this server. */
export function workbenchUrl(server: CodeServer, folder: string, opts: OpenOptions = {}): string {
  const authority = `127.0.0.1:${server.port}`;
  const remote = (p: string) => `vscode-remote://${authority}${encodeURI(p)}`;
  const payload: [string, string][] = [];
  if (opts.extensionDevelopmentPath) payload.push(['extensionDevelopmentPath', remote(opts.extensionDevelopmentPath)]);
  if (opts.extensionTestsPath) payload.push(['extensionTestsPath', remote(opts.extensionTestsPath)]);
  let url = `${server.url}/?folder=${encodeURIComponent(folder)}`;
  if (payload.length) url += `&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  return url;
}

/** What VS Code's default `files.exclude` hides from the Explorer. */
const EXCLUDED = new Set(['.git', '.svn', '.hg', 'CVS', '.DS_Store', 'Thumbs.db']);

/** Whether the Explorer will list something in `folder` (a folder that is missing or empty shows no row). */
function hasShownEntries(folder: string): boolean {
  try {
    return readdirSync(folder).some((name) => !EXCLUDED.has(name));
  } catch {
    return false;
  }
}

/** Opens `folder` in code-server's workbench in a fresh headless Chromium with a private profile and HOME. */
export async function openWorkbench(server: CodeServer, folder: string, opts: OpenOptions = {}): Promise<Workbench> {
  const dir = await mkdtemp('/tmp/pw-');
  const forget = removeOnExit(dir);
  const home = join(dir, 'home');
  await mkdir(home, { recursive: true });
  let context: BrowserContext | undefined;
  const lines: string[] = [];
  const close = async () => {
    try {
      await context?.close();
    } catch {
      /* already closed */
    }
    for (let i = 0; i < 40; i++) {
      const left = pidsMentioning(dir);
      if (left.length === 0) break;
      if (i >= 20) for (const pid of left) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      await sleep(100);
    }
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    forget();
  };
  try {
    context = await launchChromium(dir, home, opts.viewport);
    const page = context.pages()[0] ?? (await context.newPage());
    // Every locator call without its own limit: 10 s idle, stretched by the load when the page opens.
    page.setDefaultTimeout(patience(10_000));
    page.on('console', (m) => lines.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => lines.push(`pageerror: ${e.message}`));
    await opts.beforeGoto?.(page);
    await page.goto(workbenchUrl(server, folder, opts), { waitUntil: 'domcontentloaded', timeout: patience(30_000) });
    if (opts.waitForWorkbench !== false) {
      await page.locator('.monaco-workbench').waitFor({ timeout: patience(30_000) });
      await page.locator('.part.statusbar').waitFor({ timeout: patience(30_000) });
      // The Explorer's first row, when the folder has one to show: waiting for a row of an empty folder
      // spent the whole limit (stretched by the load: 130 s of a suite's 171 s on a busy machine).
      if (hasShownEntries(folder)) {
        await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: patience(30_000) }).catch(() => {
          /* a slow Explorer: the tests that need a row wait for theirs */
        });
      }
    }
    return { page, context, consoleLog: () => lines, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Runs `fn` up to `tries` times, returning its first success; rethrows the last error. */
async function retry<T>(tries: number, fn: (attempt: number) => Promise<T>): Promise<T> {
  let last: unknown;
  for (let i = 0; i < tries; i++) {
    try {
      return await fn(i);
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const exact = (s: string | RegExp) => (typeof s === 'string' ? new RegExp(`^\\s*${escapeRe(s)}\\s*$`) : s);

const QUICK_INPUT = '.quick-input-widget';
const QUICK_INPUT_BOX = '.quick-input-widget .quick-input-box input'; // not `.quick-input-widget input`: a checkbox comes first

function quickInputRow(page: Page, label: string | RegExp): Locator {
  return page
    .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`)
    .filter({ has: page.locator('.label-name', { hasText: exact(label) }) })
    .first();
}

/** Picks a row of the open quick input: Enter when it is the focused row, else a click. */
async function pickRow(page: Page, row: Locator): Promise<void> {
  const focused = await row.evaluate((el) => el.classList.contains('focused')).catch(() => false);
  if (focused) await page.keyboard.press('Enter');
  else await row.click({ timeout: patience(2_000) });
}

/**
 * Runs a command from the palette by its full title (e.g. "Swarm: Connect to Hostfile"): F1, type, wait
 * for the row, Enter. Starts from scratch up to `tries` times (the palette may be closed by a focus thief,
 * or may not list an extension's commands yet).
 */
export async function runCommand(page: Page, title: string, opts: { tries?: number; timeoutMs?: number } = {}): Promise<void> {
  const timeout = patience(opts.timeoutMs ?? 5_000);
  await retry(opts.tries ?? 5, async (attempt) => {
    if (attempt > 0) {
      await page.keyboard.press('Escape');
      await sleep(300 * attempt);
    }
    const input = page.locator(QUICK_INPUT_BOX);
    if (!(await input.isVisible())) {
      await page.locator('.monaco-workbench').focus().catch(() => {});
      await page.keyboard.press('F1');
    }
    await input.waitFor({ state: 'visible', timeout });
    await input.fill(`>${title}`);
    const row = quickInputRow(page, title);
    await row.waitFor({ state: 'visible', timeout });
    await pickRow(page, row);
    // Done when the palette closed or now shows something else (the command's own quick input).
    // (a string: this project's TypeScript has no DOM lib)
    await page.waitForFunction(
      `(() => { const el = document.querySelector(${JSON.stringify(QUICK_INPUT_BOX)});
        return !el || el.offsetParent === null || el.value !== ${JSON.stringify(`>${title}`)}; })()`,
      undefined,
      { timeout },
    );
  });
}

/** Selects the item labelled `label` in the quick pick that is open (or opens soon). */
export async function quickPickSelect(page: Page, label: string | RegExp, opts: { timeoutMs?: number; tries?: number } = {}): Promise<void> {
  const timeout = patience(opts.timeoutMs ?? 10_000);
  await retry(opts.tries ?? 3, async () => {
    const row = quickInputRow(page, label);
    await row.waitFor({ state: 'visible', timeout });
    await pickRow(page, row);
    // Hidden, not detached: a closed quick input keeps its list in the DOM (waiting for it to go cost the
    // whole limit on every pick: 3 s idle, 30 s at load 20).
    await row.waitFor({ state: 'hidden', timeout: patience(3_000) }).catch(() => {
      throw new Error(`quick pick row ${label} still visible after picking it`);
    });
  });
}

/** Types `text` into the open input box (showInputBox or a quick pick's filter) and presses Enter. */
export async function quickInputType(page: Page, text: string, opts: { timeoutMs?: number; enter?: boolean } = {}): Promise<void> {
  const input = page.locator(QUICK_INPUT_BOX);
  await input.waitFor({ state: 'visible', timeout: patience(opts.timeoutMs ?? 10_000) });
  await input.fill(text);
  if (opts.enter !== false) await page.keyboard.press('Enter');
}

/**
 * Runs a command that asks one quick pick and picks `label`. The pick closes when something takes
 * focus (a webview drawing a run's progress does): the whole command is then run again. Safe because
 * a pick closed unanswered makes the command do nothing.
 */
export async function runCommandPicking(page: Page, title: string, label: string | RegExp, opts: { tries?: number } = {}): Promise<void> {
  await retry(opts.tries ?? 3, async () => {
    await runCommand(page, title);
    await quickPickSelect(page, label, { tries: 1 });
  });
}

/**
 * Runs a command that asks one question (showInputBox) and answers it. The box closes when something
 * takes focus (a webview reviving after a reload does): the whole command is then run again. Safe
 * because a box closed unanswered makes the command do nothing.
 */
export async function runCommandAnswering(page: Page, title: string, answer: string, opts: { tries?: number } = {}): Promise<void> {
  await retry(opts.tries ?? 3, async () => {
    await runCommand(page, title);
    await quickInputType(page, answer, { timeoutMs: 5_000 });
  });
}

/** The explorer row of `fileName` (its label; folders must be expanded first). */
export function explorerRow(page: Page, fileName: string): Locator {
  return page
    .locator('.explorer-folders-view .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: exact(fileName) }) })
    .first();
}

/**
 * Right-clicks an explorer row with no hover in the way: a row's path hover (shown after the mouse
 * rested on the row above) covers the next row and stays while the pointer is on it, so a click there
 * was taken by the hover for its whole limit (118 s in CI at load 15). The mouse leaves the list first.
 */
export async function rightClickRow(page: Page, row: Locator, timeoutMs = 5_000): Promise<void> {
  await page.mouse.move(0, 0);
  await page.locator('.context-view .hover-contents').waitFor({ state: 'hidden', timeout: patience(2_000) }).catch(() => {});
  await row.click({ button: 'right', timeout: patience(timeoutMs) });
}

/**
 * Right-clicks `fileName` in the explorer and clicks the context-menu entry `itemLabel`, trying again
 * until `timeoutMs` (stretched by the load). A menu drawn before the extension's contributions arrived
 * (just after a load or a reload) never gains the entry: it is closed and drawn again, rather than waited
 * on. Menu items only take a mouseup ~100 ms after they render: wait 250 ms, click, check the menu closed.
 */
export async function explorerContextMenu(
  page: Page,
  fileName: string,
  itemLabel: string | RegExp,
  opts: {
    timeoutMs?: number;
    /** Run before each try (showing the Explorer: a reloaded window may switch the side bar back to the view it showed last). */
    reveal?: () => Promise<unknown>;
  } = {},
): Promise<void> {
  const menu = page.locator('.context-view .monaco-menu');
  const item = menu.locator('.action-item').filter({ has: page.locator('.action-label', { hasText: exact(itemLabel) }) }).first();
  let last: unknown;
  const clicked = await until(
    async () => {
      try {
        await opts.reveal?.();
        if ((await menu.isVisible()) && !(await item.isVisible())) {
          await page.keyboard.press('Escape');
          await menu.waitFor({ state: 'hidden', timeout: patience(2_000) });
        }
        if (!(await menu.isVisible())) {
          // Not drawn yet, or the side bar shows another view: the next try shows it again (waiting on it here
          // held each try for its whole limit, 27 s at load 11).
          const row = explorerRow(page, fileName);
          if (!(await row.isVisible())) throw new Error(`${fileName} is not shown in the Explorer`);
          await rightClickRow(page, row);
          await menu.waitFor({ state: 'visible', timeout: patience(3_000) });
        }
        // The menu's entries are drawn with it: one missing now is missing from this menu.
        if (!(await item.isVisible())) throw new Error(`no "${itemLabel}" in the context menu of ${fileName} (yet)`);
        await sleep(250);
        await item.click({ timeout: patience(2_000) });
        await menu.waitFor({ state: 'hidden', timeout: patience(2_000) });
        return true;
      } catch (e) {
        last = e;
        return false;
      }
    },
    `"${itemLabel}" in the context menu of ${fileName}`,
    opts.timeoutMs ?? 30_000,
    { intervalMs: 250 },
  ).catch(() => false);
  if (!clicked) throw last;
}

/** The labels of the explorer context menu of `fileName` (then closes the menu). */
export async function explorerContextMenuItems(page: Page, fileName: string): Promise<string[]> {
  const row = explorerRow(page, fileName);
  await row.waitFor({ state: 'visible', timeout: patience(10_000) });
  await rightClickRow(page, row);
  const menu = page.locator('.context-view .monaco-menu');
  await menu.waitFor({ state: 'visible', timeout: patience(3_000) });
  await sleep(250);
  const labels = (await menu.locator('.action-item .action-label').allTextContents()).map((s) => s.trim()).filter(Boolean);
  await page.keyboard.press('Escape');
  await menu.waitFor({ state: 'hidden', timeout: patience(2_000) }).catch(() => {});
  return labels;
}

/** Waits for a status bar item whose text matches and returns it with its text (codicons excluded). */
export async function statusBarItem(page: Page, textRegex: RegExp, opts: { timeoutMs?: number } = {}): Promise<{ locator: Locator; text: string; tooltip: string | null }> {
  const locator = page.locator('.part.statusbar .statusbar-item').filter({ hasText: textRegex }).first();
  await locator.waitFor({ state: 'visible', timeout: patience(opts.timeoutMs ?? 10_000) });
  const text = ((await locator.textContent()) ?? '').trim();
  const tooltip = await locator.locator('a, .statusbar-item-label').first().getAttribute('aria-label').catch(() => null);
  return { locator, text, tooltip };
}

export interface TreeRow {
  label: string;
  description: string;
  /** aria-level: 1 for top-level rows. */
  level: number;
  /** true/false for collapsible rows, undefined for leaves. */
  expanded: boolean | undefined;
  locator: Locator;
}

/** The view pane whose header title is `viewTitle` (case-insensitive, e.g. "Endpoints"). */
export function viewPane(page: Page, viewTitle: string): Locator {
  return page
    .locator('.pane')
    .filter({ has: page.locator('.pane-header .title', { hasText: new RegExp(`^\\s*${escapeRe(viewTitle)}\\s*$`, 'i') }) })
    .first();
}

/** Expands a collapsed view pane (views other than the first often start collapsed). */
export async function expandView(page: Page, viewTitle: string, opts: { timeoutMs?: number } = {}): Promise<Locator> {
  const pane = viewPane(page, viewTitle);
  await pane.waitFor({ state: 'visible', timeout: patience(opts.timeoutMs ?? 10_000) });
  const header = pane.locator('.pane-header').first();
  await retry(3, async () => {
    if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click({ timeout: patience(2_000) });
    await pane.locator('.pane-body').waitFor({ state: 'visible', timeout: patience(2_000) });
  });
  return pane;
}

/**
 * The rendered rows of a tree view (expanded first if collapsed), label and description read separately
 * (their text is glued together otherwise). Waits up to timeoutMs for at least `minRows` rows (default 1;
 * 0 reads at once, e.g. for a view showing its welcome content); returns what is there by then.
 */
export async function treeRows(page: Page, viewTitle: string, opts: { timeoutMs?: number; minRows?: number } = {}): Promise<TreeRow[]> {
  const pane = await expandView(page, viewTitle, { timeoutMs: opts.timeoutMs ?? 10_000 });
  const timeout = patience(opts.timeoutMs ?? 10_000);
  const rows = pane.locator('.pane-body .monaco-list-row');
  const minRows = opts.minRows ?? 1;
  if (minRows > 0) await rows.nth(minRows - 1).waitFor({ state: 'visible', timeout }).catch(() => {});
  const out: TreeRow[] = [];
  for (let i = 0, n = await rows.count(); i < n; i++) {
    const row = rows.nth(i);
    const info = await row.evaluate((el) => {
      const label = el.querySelector('.label-name') ?? el.querySelector('.monaco-highlighted-label');
      const description = el.querySelector('.label-description');
      const exp = el.getAttribute('aria-expanded');
      return {
        label: (label?.textContent ?? '').trim(),
        description: (description?.textContent ?? '').trim(),
        level: Number(el.getAttribute('aria-level') ?? '1'),
        expanded: exp === null ? undefined : exp === 'true',
      };
    });
    out.push({ ...info, locator: row });
  }
  return out;
}

/** Texts of the visible notification toasts (newest first, as rendered). */
export async function notifications(page: Page): Promise<string[]> {
  const texts = await page.locator('.notifications-toasts .notification-list-item-message').allTextContents();
  return texts.map((t) => t.trim()).filter(Boolean);
}

/**
 * Waits for a notification matching `re` and returns its text. A toast hides itself 10–20 s after it
 * shows (VS Code purges toasts of a focused window): on a loaded machine the test may look later than
 * that, so a toast not seen in time is looked for in the notification centre, which keeps them all.
 */
export async function waitForNotification(page: Page, re: RegExp, opts: { timeoutMs?: number } = {}): Promise<string> {
  const toast = page.locator('.notifications-toasts .notification-list-item-message').filter({ hasText: re }).first();
  try {
    await toast.waitFor({ state: 'visible', timeout: patience(opts.timeoutMs ?? 10_000) });
    return ((await toast.textContent()) ?? '').trim();
  } catch (err) {
    await runCommand(page, 'Notifications: Show Notifications');
    const kept = page.locator('.notifications-center .notification-list-item-message').filter({ hasText: re }).first();
    const text = await kept.textContent({ timeout: patience(5_000) }).catch(() => undefined);
    await runCommand(page, 'Notifications: Hide Notifications').catch(() => {});
    if (text === undefined || text === null) throw err;
    return text.trim();
  }
}

/** Full-page PNG with animations fast-forwarded (finite ones finished, infinite ones cancelled) and no caret. */
export async function screenshot(page: Page, path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await page.evaluate(`for (const a of document.getAnimations()) { try { a.finish(); } catch { a.cancel(); /* infinite */ } }`);
  await page.screenshot({ path, animations: 'disabled', caret: 'hide' });
}

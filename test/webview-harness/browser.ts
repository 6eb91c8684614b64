/**
 * Headless Debian Chromium for the panel harness (playwright-core): a private profile and HOME
 * that go away on close, and pages that record console errors and uncaught exceptions.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../helpers/workbench.ts';


export interface PanelPage {
  page: Page;
  /** Console errors and warnings, and uncaught exceptions, so far. */
  problems: string[];
}

export interface Browser {
  context: BrowserContext;
  open(url: string, viewport?: { width: number; height: number }): Promise<PanelPage>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const dir = await mkdtemp(join(tmpdir(), 'swarm-webview-'));
  const home = join(dir, 'home');
  await mkdir(home, { recursive: true });
  let context: BrowserContext;
  try {
    context = await launchChromium(dir, home);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const first = context.pages()[0];
  return {
    context,
    async open(url, viewport) {
      const page = first && first.url() === 'about:blank' && !first.isClosed() && context.pages().length === 1 ? first : await context.newPage();
      if (viewport) await page.setViewportSize(viewport);
      page.setDefaultTimeout(10_000);
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      await page.goto(url, { waitUntil: 'load' });
      return { page, problems };
    },
    async close() {
      await context.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

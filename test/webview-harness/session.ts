/**
 * One describe block's panel harness: the page server and headless Chromium started before its tests
 * and closed after them; `open` gives a panel page once the front end said `ready`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { Page } from 'playwright-core';
import type { HostMessage, PanelMessage } from '../../src/panel/protocol.ts';
import { launchBrowser, type Browser, type PanelPage } from './browser.ts';
import { ROOT, startHarness, type Harness, type Theme } from './server.ts';

export const SHOTS = join(ROOT, '.tmp', 'screenshots');

/** What the harness page exposes to tests (typed loosely: page callbacks run in the browser). */
export type HarnessWindow = { __host: { sent: PanelMessage[]; violations: unknown[]; post(m: unknown): void } };
declare const window: HarnessWindow;

export function panelSession(): { open(theme?: Theme, viewport?: { width: number; height: number }): Promise<PanelPage> } {
  let harness: Harness | undefined;
  let browser: Browser | undefined;
  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    harness = await startHarness();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await harness?.close();
  });
  return {
    async open(theme = 'dark', viewport) {
      const p = await browser!.open(harness!.url(theme), viewport);
      await p.page.waitForFunction(() => window.__host.sent.some((m) => m.type === 'ready'));
      return p;
    },
  };
}

/** Posts a host message to the panel, as the extension would. */
export const host = (page: Page, message: HostMessage) => page.evaluate((m) => window.__host.post(m), message);
/** Forgets what the panel sent so far. */
export const clearSent = (page: Page) => page.evaluate(() => void (window.__host.sent.length = 0));

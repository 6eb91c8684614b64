// `npm run bench`, last part: the experiment panel's front end in headless Chromium on the harness
// page (test/webview-harness: the built dist/webview bundle under the host's CSP). Prints the time
// from navigation to the first painted compose view, and from a showRun / runProgress message
// carrying 10,000 or 100,000 rows to the table painted with them.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser } from '../webview-harness/browser.ts';
import { initState, record } from '../webview-harness/fixtures.ts';
import { ROOT, startHarness } from '../webview-harness/server.ts';

if (!existsSync(join(ROOT, 'dist', 'webview', 'panel.js'))) {
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`npm run build failed:\n${built.stdout}${built.stderr}`);
}

// page.evaluate callbacks run in the page; its window is typed loosely (no DOM library here).
declare const window: unknown;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const fmt = (xs: number[]) => `median ${median(xs).toFixed(1)} ms of ${xs.map((x) => x.toFixed(0)).join(', ')}`;

const harness = await startHarness();
const browser = await launchBrowser();
try {
  console.log('\nWebview panel (headless Chromium 1280×800, harness page under the host CSP)');

  const paint: number[] = [];
  const fcp: number[] = [];
  for (let i = 0; i < 5; i++) {
    const { page } = await browser.open(harness.url('dark'));
    const [composeMs, fcpMs] = await page.evaluate(async () => {
      const host = (window as unknown as { __host: { composePainted: Promise<number> } }).__host;
      const at = await host.composePainted;
      const entry = performance.getEntriesByName('first-contentful-paint')[0];
      return [at, entry ? entry.startTime : NaN] as const;
    });
    paint.push(composeMs);
    if (Number.isFinite(fcpMs)) fcp.push(fcpMs);
    await page.close();
  }
  console.log(`  first paint of the compose view (navigation → painted): ${fmt(paint)}${fcp.length ? ` · first contentful paint median ${median(fcp).toFixed(1)} ms` : ''}`);

  for (const n of [10_000, 100_000]) {
    const viaShow: number[] = [];
    const viaProgress: number[] = [];
    const transfer: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { page } = await browser.open(harness.url('dark'));
      await page.waitForFunction(() => (window as unknown as { __host: { sent: Array<{ type: string }> } }).__host.sent.some((m) => m.type === 'ready'));
      await page.evaluate((state) => (window as unknown as { __host: { post(m: unknown): void } }).__host.post({ type: 'init', state }), initState());
      const times = await page.evaluate(
        ({ n, rec }) => (window as unknown as { __host: { benchRows(n: number, r: unknown): Promise<{ show: number; progress: number; transfer: number }> } }).__host.benchRows(n, rec),
        { n, rec: record('bench', '2026-11-02T10:20:00.000Z') },
      );
      viaShow.push(times.show);
      viaProgress.push(times.progress);
      transfer.push(times.transfer);
      await page.close();
    }
    const rows = n.toLocaleString('en-US');
    console.log(`  ${rows} rows, showRun → table painted: ${fmt(viaShow)}`);
    console.log(`  ${rows} rows, one runProgress → table painted: ${fmt(viaProgress)}`);
    console.log(`  ${rows} rows, the message alone (postMessage's structured clone, no panel work): ${fmt(transfer)}`);
  }
} finally {
  await browser.close();
  await harness.close();
}

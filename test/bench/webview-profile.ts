// Where the panel's long frames go at 10,000 prompts over 1,000 endpoints: the scenario of
// test/webview-scale.test.ts (webview-harness/big-run.ts: a batched run streaming in, its end, the tabs) on the harness page,
// traced through Chromium's DevTools protocol. For each task on the page's main thread longer than
// 50 ms it prints what the renderer did (script, style, layout, paint…) and the functions that took
// the most of it (the CPU profile's samples, mapped back to webview/ sources by the bundle's map).
// Run: `npm run build && node --import tsx test/bench/webview-profile.ts`.
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { launchBrowser } from '../webview-harness/browser.ts';
import { bigRun } from '../webview-harness/big-run.ts';
import { ROOT, startHarness } from '../webview-harness/server.ts';

declare const window: any;

const LONG_MS = 50;

const map = new SourceMap(JSON.parse(readFileSync(join(ROOT, 'dist', 'webview', 'panel.js.map'), 'utf8')));
/** A profile frame's place in the sources (file:line and the original name where the map has one). */
function where(frame: { url: string; functionName: string; lineNumber: number; columnNumber: number }): string {
  if (!frame.url.endsWith('/panel.js')) return frame.functionName || frame.url || '(native)';
  const e = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string; originalLine?: number; name?: string };
  if (!e.originalSource) return frame.functionName || '(anonymous)';
  const file = e.originalSource.replace(/^.*?(webview|node_modules|src)\//, '$1/');
  return `${e.name ?? (frame.functionName || '?')} ${file}:${(e.originalLine ?? 0) + 1}`;
}

interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  /** Thread (CPU) time, µs. */
  tdur?: number;
  args?: { data?: { frame?: string } };
}
interface Profile {
  nodes: Array<{ id: number; callFrame: { url: string; functionName: string; lineNumber: number; columnNumber: number }; parent?: number; children?: number[] }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

async function traced(page: Page, cdp: CDPSession, what: string, act: () => Promise<unknown>): Promise<void> {
  const events: TraceEvent[] = [];
  const collect = (e: { value: unknown[] }) => events.push(...(e.value as TraceEvent[]));
  cdp.on('Tracing.dataCollected', collect);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline', transferMode: 'ReportEvents' });
  await cdp.send('Profiler.start');
  await act();
  await page.evaluate(() => new Promise((r) => window.requestAnimationFrame(() => setTimeout(r, 50))));
  const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
  const complete = new Promise<void>((r) => cdp.once('Tracing.tracingComplete', () => r()));
  await cdp.send('Tracing.end');
  await complete;
  cdp.off('Tracing.dataCollected', collect);

  // The renderer's main thread: the one that ran the most script (FunctionCall / EvaluateScript).
  const byThread = new Map<string, number>();
  for (const e of events) if (e.ph === 'X' && (e.name === 'FunctionCall' || e.name === 'v8.callFunction')) byThread.set(`${e.pid}:${e.tid}`, (byThread.get(`${e.pid}:${e.tid}`) ?? 0) + (e.dur ?? 0));
  const main = [...byThread.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const onMain = events.filter((e) => e.ph === 'X' && `${e.pid}:${e.tid}` === main).sort((a, b) => a.ts - b.ts);
  const tasks = onMain.filter((e) => (e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask') && (e.dur ?? 0) > LONG_MS * 1000);

  // Profile samples with their times (µs, the trace's clock) and their leaf frame's place.
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const samples: Array<[number, number]> = [];
  let t = profile.startTime;
  profile.samples.forEach((id, i) => samples.push([(t += profile.timeDeltas[i]!), id]));

  console.log(`\n== ${what}: ${tasks.length} task(s) over ${LONG_MS} ms on the page's main thread`);
  for (const task of tasks) {
    const end = task.ts + task.dur!;
    const inside = onMain.filter((e) => e.ts >= task.ts && e.ts + (e.dur ?? 0) <= end && e !== task);
    const kinds = new Map<string, number>();
    for (const e of inside) if (/^(FunctionCall|EvaluateScript|UpdateLayoutTree|Layout|Paint|PrePaint|Layerize|ParseHTML|HitTest|MajorGC|MinorGC|UpdateLayer|Commit)$/.test(e.name)) kinds.set(e.name, (kinds.get(e.name) ?? 0) + (e.tdur ?? e.dur ?? 0));
    // A big layout: how much of the tree it laid out, and the script that forced it (if any).
    for (const e of inside) {
      if (e.name !== 'Layout' || (e.dur ?? 0) < 20_000) continue;
      const b = (e.args as { beginData?: { dirtyObjects?: number; totalObjects?: number; partialLayout?: boolean; stackTrace?: Array<{ functionName: string; url: string; lineNumber: number; columnNumber: number }> } }).beginData;
      const forced = b?.stackTrace?.slice(0, 4).map((f) => where({ ...f, lineNumber: f.lineNumber - 1, columnNumber: f.columnNumber - 1 })).join(' < ');
      console.log(`    layout ${(e.dur! / 1000).toFixed(0)} ms (CPU ${((e.tdur ?? 0) / 1000).toFixed(0)} ms): ${b?.dirtyObjects} of ${b?.totalObjects} objects${b?.partialLayout ? ' (partial)' : ''}${forced ? `, forced by ${forced}` : ''}`);
    }
    const self = new Map<string, number>();
    const total = new Map<string, number>();
    let dt = 0;
    let n = 0;
    for (let i = 0; i < samples.length; i++) {
      const [at, id] = samples[i]!;
      if (at < task.ts || at > end) continue;
      const step = i + 1 < samples.length ? Math.min(samples[i + 1]![0] - at, 2000) : 200;
      dt += step;
      n++;
      const leaf = nodes.get(id)!;
      self.set(where(leaf.callFrame), (self.get(where(leaf.callFrame)) ?? 0) + step);
      const seen = new Set<string>();
      for (let p: number | undefined = id; p !== undefined; p = parent.get(p)) {
        const w = where(nodes.get(p)!.callFrame);
        if (seen.has(w)) continue;
        seen.add(w);
        total.set(w, (total.get(w) ?? 0) + step);
      }
    }
    const ms = (us: number) => `${(us / 1000).toFixed(0)} ms`;
    const top = (m: Map<string, number>, k: number) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, k).map(([w, us]) => `      ${ms(us).padStart(7)}  ${w}`).join('\n');
    console.log(`  task ${ms(task.dur!)} (CPU ${ms(task.tdur ?? 0)}; CPU below): ${[...kinds.entries()].sort((a, b) => b[1] - a[1]).map(([k, us]) => `${k} ${ms(us)}`).join(' · ')}`);
    console.log(`    self time (${n} samples, ${ms(dt)}):\n${top(self, 12)}`);
    console.log(`    total time:\n${top(total, 18)}`);
  }
}

const harness = await startHarness();
const browser = await launchBrowser();
try {
  const { page } = await browser.open(harness.url('dark'), { width: 1400, height: 900 });
  await page.waitForFunction(() => window.__host.sent.some((m: { type: string }) => m.type === 'ready'));
  const cdp = await page.context().newCDPSession(page);
  await bigRun(page, 'big', (what, act) => traced(page, cdp, what, act));
} finally {
  await browser.close();
  await harness.close();
}

/**
 * Contrast of the panel's status colours as rendered (WCAG 2), read inside the page: the harness
 * (webview-a11y.test.ts) and a real VS Code (test/bench/panel-themes.ts) measure the same texts.
 */
import type { Frame, Page } from 'playwright-core';

declare const document: any;
type Element = any;
declare const getComputedStyle: (e: unknown) => { color: string; backgroundColor: string; getPropertyValue(name: string): string };

/** Text whose colour says a status, by what it says. */
export const STATUS_TEXT: Record<string, string> = {
  'ok (table)': '#results-table .s-ok .c-status',
  'failed (table)': '#results-table .s-failed .c-status',
  'failed answer (table)': '#results-table .s-failed .c-resp',
  'ok (run bar)': '#run-status .counts .ok',
  'failed (run bar)': '#run-status .counts .failed',
  'cancelled (run bar)': '#run-status .counts .cancelled',
  'cancelled (results)': '#shown-count .cancelled',
  'down (top bar)': '#conn-health.warning',
  'better value (comparison)': '#compare-figures td.best .median',
  'lost prompts (comparison)': '#arm-losses .failed',
  'description text': '#results .figures dt',
};

/** The contrast of `selector`'s text over what is painted behind it (WCAG 2 relative luminance, alpha composited). */
export async function contrastOf(page: Page | Frame, selector: string): Promise<{ ratio: number; fg: string; bg: string } | null> {
  await page.evaluate('window.__name = (f) => f'); // the helper tsx's keepNames calls inside the page function
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (!el) return null;
    const parse = (c: string): number[] => {
      const hex = c.trim().match(/^#([0-9a-f]{6})([0-9a-f]{2})?$/i);
      if (hex) return [0, 2, 4].map((i) => parseInt(hex[1].slice(i, i + 2), 16)).concat(hex[2] ? parseInt(hex[2], 16) / 255 : 1);
      const m = c.match(/rgba?\(([^)]+)\)/);
      if (!m) return [0, 0, 0, 0];
      const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
      return [p[0], p[1], p[2], p[3] ?? 1];
    };
    const over = (top: number[], under: number[]) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3])).concat(1);
    // The backgrounds from the page down to the element, composited.
    const chain: Element[] = [];
    for (let e = el; e; e = e.parentElement ?? e.getRootNode()?.host) chain.unshift(e);
    // Behind a page that paints no background of its own, VS Code's editor background (a real
    // webview is transparent over it; the harness page paints it on its body).
    const backdrop = parse(getComputedStyle(document.documentElement).getPropertyValue('--vscode-editor-background'));
    let bg = backdrop[3] > 0 ? over(backdrop, [255, 255, 255, 1]) : [255, 255, 255, 1];
    for (const e of chain) {
      const b = parse(getComputedStyle(e).backgroundColor);
      if (b[3] > 0) bg = over(b, bg);
    }
    const fg = over(parse(getComputedStyle(el).color), bg);
    const lum = (c: number[]) => {
      const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
    };
    const [a, b] = [lum(fg), lum(bg)];
    const hex = (c: number[]) => `#${c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;
    return { ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), fg: hex(fg), bg: hex(bg) };
  }, selector);
}

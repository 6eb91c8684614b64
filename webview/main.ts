/**
 * The Swarm Lab panel's entry (bundled to dist/webview/panel.js, an IIFE for Chromium 120+).
 * Runs under the host's CSP (`default-src 'none'`, scripts by nonce, styles and fonts from the
 * extension only): no inline styles in markup, no remote content, model output always as text.
 */
import './panel.css';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-form-group/index.js';
import '@vscode-elements/elements/dist/vscode-form-helper/index.js';
import '@vscode-elements/elements/dist/vscode-icon/index.js';
import '@vscode-elements/elements/dist/vscode-label/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-tab-panel/index.js';
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import './table/results-table.ts';
import './table/prompt-list.ts';
import './table/arms-table.ts';
import './charts/chart.ts';
import { App } from './app.ts';

/**
 * vscode-icon needs the codicon stylesheet linked in the page under a known id. The build copies
 * codicon.css (and its font) beside panel.js, so it comes from the extension like the script.
 */
function linkCodicons(base: string | undefined): void {
  if (!base || document.getElementById('vscode-codicon-stylesheet')) return;
  const link = document.createElement('link');
  link.id = 'vscode-codicon-stylesheet';
  link.rel = 'stylesheet';
  link.href = new URL('codicon.css', base).href;
  document.head.append(link);
}

function start(base: string | undefined): void {
  linkCodicons(base);
  let root = document.getElementById('swarm-panel');
  if (!root) {
    root = document.createElement('div');
    root.id = 'swarm-panel';
    document.body.append(root);
  }
  new App(root).start();
}

// currentScript is only set while the script first runs: read it now, start when the body exists.
const base = (document.currentScript as HTMLScriptElement | null)?.src || document.querySelector<HTMLLinkElement>('link[href*="panel.css"]')?.href;
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => start(base), { once: true });
else start(base);

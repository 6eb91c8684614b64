/**
 * Serves the panel the way the extension's panel host does: an HTML page under the same strict CSP
 * (`default-src 'none'`, scripts by nonce, styles and fonts from the extension's origin only) that
 * loads the built dist/webview/panel.js and panel.css (or, at /experiment, the experiment view's
 * experiment.js and .css in its `#app`), with VS Code's theme variables and body class for the chosen
 * theme, and host.js playing the extension's side of the protocol.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { panelCsp } from '../../src/panel/csp.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(HERE, '..', '..');
const DIST = join(ROOT, 'dist', 'webview');

export type Theme = 'dark' | 'light' | 'hc' | 'hc-light';
/** The body classes and theme kind VS Code gives a webview in each theme. */
const BODY_CLASS: Record<Theme, string> = { dark: 'vscode-dark', light: 'vscode-light', hc: 'vscode-high-contrast', 'hc-light': 'vscode-high-contrast vscode-high-contrast-light' };
const KIND: Record<Theme, string> = { dark: 'vscode-dark', light: 'vscode-light', hc: 'vscode-high-contrast', 'hc-light': 'vscode-high-contrast-light' };

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.ttf': 'font/ttf',
  '.map': 'application/json',
};

export interface Harness {
  origin: string;
  /** The panel page's URL in a theme. */
  url(theme?: Theme): string;
  /** The experiment view's page, in a theme. */
  experimentUrl(theme?: Theme): string;
  close(): Promise<void>;
}

/** The CSP the extension's panel host sets (the same function), for this origin as its `webview.cspSource`. */
export const csp = panelCsp;

type Entry = 'panel' | 'experiment';

function page(origin: string, theme: Theme, entry: Entry): string {
  const nonce = randomBytes(16).toString('base64');
  const kind = KIND[theme];
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp(origin, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${origin}/harness/theme-${theme}.css">
<link rel="stylesheet" href="${origin}/harness/vscode-default.css">
<link rel="stylesheet" href="${origin}/dist/webview/${entry}.css">
<script nonce="${nonce}" src="${origin}/harness/host.js"></script>
<title>Swarm Lab</title>
</head>
<body class="${BODY_CLASS[theme]}" data-vscode-theme-kind="${kind}">
${entry === 'experiment' ? '<div id="app"></div>\n' : ''}<script nonce="${nonce}" src="${origin}/dist/webview/${entry}.js"></script>
</body>
</html>`;
}

async function file(base: string, rel: string): Promise<Buffer | null> {
  const path = normalize(join(base, rel));
  if (!path.startsWith(base + sep)) return null;
  try {
    return await readFile(path);
  } catch {
    return null;
  }
}

export async function startHarness(): Promise<Harness> {
  let origin = '';
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin);
      const send = (status: number, body: string | Buffer, type = 'text/plain; charset=utf-8') => {
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
        res.end(body);
      };
      if (url.pathname === '/' || url.pathname === '/panel' || url.pathname === '/experiment') {
        const theme = (url.searchParams.get('theme') ?? 'dark') as Theme;
        return send(200, page(origin, theme in BODY_CLASS ? theme : 'dark', url.pathname === '/experiment' ? 'experiment' : 'panel'), 'text/html; charset=utf-8');
      }
      if (url.pathname === '/favicon.ico') return send(204, '');
      const [, dir, ...rest] = url.pathname.split('/');
      const base = dir === 'harness' ? HERE : dir === 'dist' && rest[0] === 'webview' ? DIST : null;
      const rel = dir === 'harness' ? rest.join('/') : rest.slice(1).join('/');
      const body = base ? await file(base, decodeURIComponent(rel)) : null;
      if (!body) return send(404, 'not found');
      send(200, body, TYPES[extname(rel)] ?? 'application/octet-stream');
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (theme: Theme = 'dark') => `${origin}/panel?theme=${theme}`,
    experimentUrl: (theme: Theme = 'dark') => `${origin}/experiment?theme=${theme}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

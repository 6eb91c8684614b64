import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { panelCsp } from '../panel/csp.ts';

/** A stylesheet of the bundle; `id` where a library looks it up (@vscode-elements finds the codicons by id). */
export interface PageStyle {
  file: string;
  id?: string;
}

/**
 * A webview's page: the strict CSP (scripts only by a fresh nonce, nothing remote), the bundle's
 * stylesheets and script from `root`, and the root element the script draws into.
 */
export function webviewPage(webview: vscode.Webview, root: vscode.Uri, script: string, styles: readonly PageStyle[], title: string): string {
  const nonce = randomBytes(18).toString('base64url');
  const uri = (file: string) => webview.asWebviewUri(vscode.Uri.joinPath(root, file));
  const links = styles.map((s) => `<link rel="stylesheet" href="${uri(s.file)}"${s.id ? ` id="${s.id}"` : ''}>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${panelCsp(webview.cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${links}
<title>${title}</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${uri(script)}"></script>
</body>
</html>`;
}

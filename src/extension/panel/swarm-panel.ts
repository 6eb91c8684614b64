import * as vscode from 'vscode';
import { webviewPage } from '../webview-page.ts';

/**
 * The Swarm Lab panel: one webview panel per window, made (or brought forward), revived after a
 * reload, disposed. It loads the front end from `dist/webview/` under a strict CSP and knows nothing
 * of what travels over its messages (panel-host.ts does).
 */
export class SwarmPanel {
  static readonly viewType = 'swarmLab.panel';
  static current: SwarmPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  /** Shows the panel, creating it when there is none; `created` says which. */
  static createOrShow(extensionUri: vscode.Uri): { panel: SwarmPanel; created: boolean } {
    if (SwarmPanel.current) {
      SwarmPanel.current.webviewPanel.reveal();
      return { panel: SwarmPanel.current, created: false };
    }
    const webviewPanel = vscode.window.createWebviewPanel(SwarmPanel.viewType, 'Swarm Lab', vscode.ViewColumn.Active, {
      ...webviewOptions(extensionUri),
      retainContextWhenHidden: false, // the webview keeps its state with setState; the host sends `init`
    });
    return { panel: new SwarmPanel(webviewPanel, extensionUri), created: true };
  }

  /** A panel VS Code restored after a reload (the serializer hands it over). */
  static revive(webviewPanel: vscode.WebviewPanel, extensionUri: vscode.Uri): SwarmPanel {
    SwarmPanel.current?.dispose();
    webviewPanel.webview.options = webviewOptions(extensionUri);
    return new SwarmPanel(webviewPanel, extensionUri);
  }

  private constructor(
    readonly webviewPanel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
  ) {
    SwarmPanel.current = this;
    webviewPanel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'swarm.svg');
    webviewPanel.webview.html = panelHtml(webviewPanel.webview, vscode.Uri.joinPath(extensionUri, 'dist', 'webview'));
    webviewPanel.onDidDispose(() => this.dispose(), null, this.disposables);
  }

  get webview(): vscode.Webview {
    return this.webviewPanel.webview;
  }

  dispose(): void {
    if (SwarmPanel.current === this) SwarmPanel.current = undefined;
    this.webviewPanel.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')] };
}

/** The page: the bundle's stylesheets (its own, and the codicons @vscode-elements looks up by id), its script and the root element. */
export function panelHtml(webview: vscode.Webview, root: vscode.Uri): string {
  return webviewPage(webview, root, 'panel.js', [{ file: 'codicon.css', id: 'vscode-codicon-stylesheet' }, { file: 'panel.css' }], 'Swarm Lab');
}

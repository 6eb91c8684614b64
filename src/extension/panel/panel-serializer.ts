import * as vscode from 'vscode';
import type { PanelHost } from './panel-host.ts';
import { SwarmPanel } from './swarm-panel.ts';

/**
 * Brings the panel back after a window reload (with `onWebviewPanel:swarmLab.panel` activation): the
 * webview restores its own view from setState, and the host sends `init` once it says `ready`.
 */
export function registerPanelSerializer(host: () => Promise<PanelHost>): vscode.Disposable {
  return vscode.window.registerWebviewPanelSerializer(SwarmPanel.viewType, {
    deserializeWebviewPanel: async (webviewPanel) => (await host()).revive(webviewPanel),
  });
}

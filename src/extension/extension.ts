import * as vscode from 'vscode';
import type { HostMessage } from '../panel/protocol.ts';
import { PromptSetCodeLens } from './codelens.ts';
import { connect, connectRemote, disconnect, reconnect } from './commands/connect.ts';
import { copyUrl, openMetrics, toggleExclude } from './commands/endpoint-actions.ts';
import { compare, scatter, treeReduceCommand } from './commands/run.ts';
import { startSimulator } from './commands/simulator.ts';
import type { EndpointView } from './connection.ts';
import { EndpointTree } from './endpoint-tree.ts';
import { publishHostfileContext } from './hostfiles.ts';
import { PanelHost } from './panel/panel-host.ts';
import { registerPanelSerializer } from './panel/panel-serializer.ts';
import { exportRun } from './panel/run-export.ts';
import { RunTracker } from './run-tracker.ts';
import { ApiKeyStore } from './secrets.ts';
import type { Services } from './services.ts';
import { Session } from './session.ts';
import { SwarmStatusBar } from './status-bar.ts';

/** What the extension hands to other extensions and to its tests: read-only views of its state (and the panel's wire, for tests). */
export interface SwarmLabApi {
  snapshot(): { connected: boolean; source: string | null; endpoints: EndpointView[]; running: boolean; statusBar: SwarmStatusBar['state'] };
  /** The panel's host side, for tests: what it posted, and the webview's side played by hand. */
  panel: {
    state(): { open: boolean; visible: boolean; ready: boolean };
    messages(): readonly HostMessage[];
    /** Handled as if the webview had posted it; resolves once handled (a request: once answered). */
    receive(message: unknown): Promise<void>;
    /** `exportRun` without the save dialog. */
    exportRun(id: string, format: 'jsonl' | 'csv', path: string): Promise<string>;
    /** `renameRun` and `deleteRun` without their dialogs. */
    renameRun(id: string, label: string): Promise<void>;
    deleteRun(id: string): Promise<void>;
  };
}

export function activate(context: vscode.ExtensionContext): SwarmLabApi {
  const log = vscode.window.createOutputChannel('Swarm Lab', { log: true });
  const keys = new ApiKeyStore(context.secrets);
  const session = new Session(keys, log);
  const runs = new RunTracker();
  const services: Services = { context, log, keys, session, runs };
  const panel = new PanelHost(services);
  const tree = new EndpointTree();
  const statusBar = new SwarmStatusBar(runs);
  session.onDidChange((c) => {
    tree.show(c);
    statusBar.show(c);
  });

  const command = (id: string, run: (...args: never[]) => unknown) => vscode.commands.registerCommand(id, run as (...args: unknown[]) => unknown);
  context.subscriptions.push(
    log,
    session,
    runs,
    tree,
    statusBar,
    panel,
    registerPanelSerializer(panel),
    vscode.window.registerTreeDataProvider('swarmLab.endpoints', tree),
    vscode.languages.registerCodeLensProvider(PromptSetCodeLens.selector, new PromptSetCodeLens()),
    command('swarmLab.connect', (uri?: vscode.Uri) => connect(services, uri)),
    command('swarmLab.connectRemote', (path?: string) => connectRemote(services, path)),
    command('swarmLab.disconnect', () => disconnect(services)),
    command('swarmLab.reconnect', () => reconnect(services)),
    command('swarmLab.refresh', () => session.connection?.refresh()),
    command('swarmLab.openPanel', () => void panel.open()),
    command('swarmLab.scatter', (args?: Parameters<typeof scatter>[2]) => scatter(services, panel, args)),
    command('swarmLab.treeReduce', (args?: Parameters<typeof treeReduceCommand>[2]) => treeReduceCommand(services, panel, args)),
    command('swarmLab.compare', (args?: Parameters<typeof compare>[2]) => compare(services, panel, args)),
    command('swarmLab.startSimulator', (args?: { count?: number }) => startSimulator(services, args)),
    command('swarmLab.setApiKey', (value?: string) => setApiKey(services, value)),
    command('swarmLab.showLog', () => log.show()),
    command('swarmLab.cancelRun', () => runs.cancel()),
    command('swarmLab.copyUrl', (row?: { view: EndpointView }) => copyUrl(row)),
    command('swarmLab.openMetrics', (row?: { view: EndpointView }) => openMetrics(services, row)),
    command('swarmLab.toggleExclude', (row?: { view: EndpointView }) => toggleExclude(services, row)),
    keys.onDidChange(() => void keys.get().then((key) => session.connection?.setApiKey(key))),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('swarmLab.hostfilePatterns') && void publishHostfileContext()),
  );
  void publishHostfileContext();
  void vscode.commands.executeCommand('setContext', 'swarmLab.connected', false);

  return {
    snapshot: () => ({
      connected: Boolean(session.connection),
      source: session.connection?.source.label ?? null,
      endpoints: session.connection ? [...session.connection.snapshot] : [],
      running: Boolean(runs.running),
      statusBar: statusBar.state,
    }),
    panel: {
      state: () => panel.state,
      messages: () => panel.messages(),
      receive: (message) => panel.receive(message),
      exportRun: (id, format, path) => exportRun(panel.history, id, format, path),
      renameRun: (id, label) => panel.history.rename(id, label),
      deleteRun: (id) => panel.history.delete(id),
    },
  };
}

/** `Swarm: Set API Key`: stored in SecretStorage (never in settings or logs); empty clears it. */
async function setApiKey(services: Services, value?: string): Promise<void> {
  const key =
    value ??
    (await vscode.window.showInputBox({ title: 'Swarm: API key', prompt: "The vLLM server's --api-key, sent as a Bearer token (stored in VS Code's secret storage). Empty clears it.", password: true, ignoreFocusOut: true }));
  if (key === undefined) return;
  await services.keys.set(key.trim() || undefined);
  await services.session.connection?.setApiKey(key.trim() || undefined);
  services.log.info(key.trim() ? 'API key set' : 'API key cleared');
}

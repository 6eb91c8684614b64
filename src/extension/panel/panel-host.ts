import * as vscode from 'vscode';
import { summarize } from '../../core/index.ts';
import type { HostMessage, PanelState, RunRequest } from '../../panel/protocol.ts';
import type { Services } from '../services.ts';
import { settings } from '../settings.ts';
import { endpointInfos, EndpointFeed } from './endpoint-feed.ts';
import { MessageRouter, type PanelHandlers } from './message-router.ts';
import { PanelChannel } from './panel-channel.ts';
import { copy, importFile, openInEditor, savePromptSet } from './prompt-requests.ts';
import { diffRuns, exportRun } from './run-export.ts';
import { RunHistory } from './run-history.ts';
import { RunOrchestrator, showRunMessage, type Launched } from './run-orchestrator.ts';
import { LaunchError } from './run-request-plan.ts';
import { SwarmPanel } from './swarm-panel.ts';

/** Messages the host posted, oldest first, for tests (the newest this many). */
const LOG_LIMIT = 2_000;

/**
 * The extension's side of the panel: owns the one panel (through SwarmPanel), the wire to its
 * webview, the router of its messages, the runs it starts and the history. Commands use it to show
 * their runs; it lives as long as the extension, the panel may come and go.
 */
export class PanelHost implements vscode.Disposable {
  readonly history: RunHistory;
  readonly runs: RunOrchestrator;
  private panel: SwarmPanel | undefined;
  private channel: PanelChannel | undefined;
  private readonly router: MessageRouter;
  private readonly feed: EndpointFeed;
  private readonly posted: HostMessage[] = [];
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly services: Services) {
    this.history = new RunHistory(services.context.globalStorageUri);
    this.runs = new RunOrchestrator(services, this.history, (m) => this.post(m));
    this.router = new MessageRouter(this.handlers(), (m) => this.post(m), (w) => services.log.warn(w));
    this.feed = new EndpointFeed(services.session, (m) => this.post(m));
  }

  /** Opens the panel (or brings it forward). */
  open(): SwarmPanel {
    const { panel, created } = SwarmPanel.createOrShow(this.services.context.extensionUri);
    if (created) this.attach(panel);
    return panel;
  }

  /** Takes over a panel VS Code restored after a reload (see panel-serializer.ts). */
  revive(webviewPanel: vscode.WebviewPanel): void {
    this.attach(SwarmPanel.revive(webviewPanel, this.services.context.extensionUri));
  }

  /** Shows a finished run in the panel: opens the panel when `reveal`, else only updates one that is open. */
  show(launched: Launched, reveal: boolean): void {
    if (reveal) this.open();
    if (this.panel) this.post(showRunMessage(launched.saved, launched.rows));
  }

  /** Handles a message as if the webview had posted it (the webview's own go through here too). */
  receive(message: unknown): Promise<void> {
    return this.router.receive(message);
  }

  get state(): { open: boolean; visible: boolean; ready: boolean } {
    return { open: Boolean(this.panel), visible: Boolean(this.panel?.webviewPanel.visible), ready: Boolean(this.channel?.isReady) };
  }

  /** Messages posted to the webview so far (tests). */
  messages(): readonly HostMessage[] {
    return this.posted;
  }

  private attach(panel: SwarmPanel): void {
    for (const s of this.subscriptions.splice(0)) s.dispose();
    this.panel = panel;
    const channel = new PanelChannel(panel.webview, (m) => {
      this.posted.push(m);
      if (this.posted.length > LOG_LIMIT) this.posted.splice(0, this.posted.length - LOG_LIMIT);
    });
    this.channel = channel;
    this.subscriptions.push(
      panel.webview.onDidReceiveMessage((m) => void this.receive(m)),
      panel.webviewPanel.onDidChangeViewState((e) => !e.webviewPanel.visible && channel.markGone()),
      panel.webviewPanel.onDidDispose(() => {
        if (this.panel !== panel) return;
        this.panel = undefined;
        this.channel = undefined;
      }),
    );
  }

  private post(message: HostMessage): boolean {
    return this.channel?.post(message) ?? false;
  }

  private async initialState(): Promise<PanelState> {
    const c = this.services.session.connection;
    const s = settings();
    return {
      connected: Boolean(c),
      source: c?.source.label ?? null,
      endpoints: endpointInfos(c),
      defaults: { model: s.model, maxTokens: s.maxTokens, batching: s.batching },
      history: await this.history.list(),
    };
  }

  private async start(request: RunRequest, label?: string): Promise<void> {
    if (this.runs.busy) {
      void vscode.window.showWarningMessage('Swarm: a run is going; cancel it or wait for it to finish.');
      return;
    }
    try {
      await this.runs.launch({ request, ...(label ? { label } : {}) });
    } catch (err) {
      const message = (err as Error).message;
      this.services.log.error(`panel run: ${message}`);
      // The webview hears of it as a run that ended at once with the reason (so a waiting Run button is freed).
      const runId = `refused-${Date.now()}`;
      const summary = summarize([], { requests: new Map(), usage: new Map(), model: null }, 0, { pattern: request.pattern, batch: request.batch });
      this.post({ type: 'runStarted', runId, pattern: request.pattern, total: 0, label: label ?? request.pattern });
      this.post({ type: 'runFinished', runId, summary, error: message, cancelled: false });
      if (err instanceof LaunchError && !this.services.session.connection) {
        void vscode.window.showWarningMessage(`Swarm: ${message}.`, 'Connect', 'Start Local Simulator').then((pick) => {
          if (pick === 'Connect') void vscode.commands.executeCommand('swarmLab.connect');
          if (pick === 'Start Local Simulator') void vscode.commands.executeCommand('swarmLab.startSimulator');
        });
      } else {
        void vscode.window.showErrorMessage(`Swarm: ${message}`);
      }
    }
  }

  private handlers(): PanelHandlers {
    return {
      // `init` first, then each live run from its start, then a run the user asked to see meanwhile.
      ready: async () => {
        const channel = this.channel;
        if (!channel) return;
        const state = await this.initialState();
        if (this.channel !== channel) return;
        const show = channel.markReady();
        channel.post({ type: 'init', state });
        this.runs.resync();
        if (show) channel.post(show);
      },
      run: (request) => this.start(request),
      rerun: async (id) => {
        try {
          const saved = await this.history.load(id);
          await this.start(await this.history.rerunRequest(id), saved.record.label);
        } catch (err) {
          void vscode.window.showErrorMessage(`Swarm: ${(err as Error).message}`);
        }
      },
      cancel: () => void this.runs.cancel(),
      requests: {
        importFile: () => importFile(),
        savePromptSet: ({ prompts }) => savePromptSet(prompts),
        openInEditor: ({ text, language }) => openInEditor(text, language),
        copy: ({ text }) => copy(text),
        openRun: async ({ id }) => {
          const saved = await this.history.load(id);
          this.post(showRunMessage(saved, await this.history.rows(saved)));
          return null;
        },
        exportRun: async ({ id, format }) => {
          const saved = await this.history.load(id);
          const target = await vscode.window.showSaveDialog({
            title: `Swarm Lab: export ${saved.record.label}`,
            filters: format === 'csv' ? { CSV: ['csv'] } : { JSONL: ['jsonl'] },
            defaultUri: vscode.Uri.joinPath(vscode.workspace.workspaceFolders?.[0]?.uri ?? this.services.context.globalStorageUri, `${id}.${format}`),
          });
          return target ? exportRun(this.history, id, format, target.fsPath) : null;
        },
        compareRuns: ({ a, b }) => diffRuns(this.history, a, b),
      },
    };
  }

  dispose(): void {
    this.feed.dispose();
    for (const s of this.subscriptions.splice(0)) s.dispose();
    this.panel?.dispose();
  }
}

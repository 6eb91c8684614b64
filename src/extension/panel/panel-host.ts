import * as vscode from 'vscode';
import type { HostMessage, PanelState, RunRequest } from '../../panel/protocol.ts';
import { parseRows, rowsJsonl } from '../../panel/result-rows.ts';
import type { Services } from '../services.ts';
import { settings } from '../settings.ts';
import { endpointInfos, EndpointFeed } from './endpoint-feed.ts';
import { MessageRouter, type PanelHandlers } from './message-router.ts';
import { PanelChannel } from './panel-channel.ts';
import { copy, importFile, openInEditor, savePromptSet } from './prompt-requests.ts';
import { diffRuns, exportRun } from './run-export.ts';
import { planContinuation, type Continuation } from './run-continuation.ts';
import { RunHistory, type SavedRun } from './run-history.ts';
import { openedRun, RunOrchestrator, type Launched } from './run-orchestrator.ts';
import { LaunchError } from './run-request-plan.ts';
import { SwarmPanel } from './swarm-panel.ts';
import { detachedEntry, detachedOf, detachedOpened, detachedRows } from '../detached-history.ts';
import { runOnCluster } from '../run-on-cluster.ts';

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
  /** The detached run last opened, and how far it was when sent: sent again as it moves, until it ends. */
  private showingDetached: { id: string; sent: string } | undefined;

  constructor(private readonly services: Services) {
    this.history = new RunHistory(services.context.globalStorageUri, () => services.detached.list.map(detachedEntry));
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

  /**
   * Brings a finished run to the panel: opens the panel when `reveal`. A webview that heard the run
   * end has it on show already; one that missed it (hidden or closed meanwhile) gets it in full.
   */
  show(launched: Launched, reveal: boolean): void {
    if (reveal) this.open();
    if (this.panel && !(launched.delivered && this.channel?.isReady)) this.post({ type: 'showRun', ...openedRun(launched.saved, launched.rows) });
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
      // While the panel is open, detached runs are read as the Detached Runs view reads them: History lists them as they move.
      this.services.detached.want(),
      this.services.detached.onDidChangeTreeData(() => void this.detachedMoved()),
      panel.webviewPanel.onDidDispose(() => {
        if (this.panel !== panel) return;
        this.panel = undefined;
        this.channel = undefined;
      }),
    );
  }

  /** A detached run moved: History's list again, and the one opened with its new rows. */
  private async detachedMoved(): Promise<void> {
    if (!this.channel?.isReady) return;
    this.post({ type: 'history', history: await this.history.list() });
    const showing = this.showingDetached;
    const run = showing && detachedOf(showing.id, this.services.detached.list);
    if (!showing || !run) return;
    const now = `${run.live} ${run.done}`;
    if (now === showing.sent) return;
    showing.sent = now;
    try {
      this.post({ type: 'showRun', ...detachedOpened(run, await detachedRows(run, this.services.detached.remote)) });
    } catch (err) {
      this.services.log.warn(`detached run ${run.id}: ${(err as Error).message}`);
    }
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

  /**
   * A saved run runs again (in full or in part) on the swarm it ran on: on another one it is another
   * experiment, so the user is asked rather than the two mixed silently.
   */
  private async onItsSwarm(saved: SavedRun, action: string): Promise<void> {
    const hostfile = saved.record.context?.hostfile;
    const now = this.services.session.connection?.source.label;
    if (hostfile && now && hostfile !== now) {
      const pick = await vscode.window.showWarningMessage(`Swarm: "${saved.record.label}" ran on ${hostfile}; ${now} is connected now.`, { modal: true }, `${action} on ${now}`);
      if (!pick) throw new Error(`not run: it ran on ${hostfile}, ${now} is connected`);
    }
  }

  /** Starts a run the webview asked for; answers its id, or throws why it cannot start (the reply says so). */
  private async start(request: RunRequest, label?: string, continued?: Continuation): Promise<{ runId: string }> {
    if (this.runs.busy) throw new Error('a run is going; cancel it or wait for it to finish');
    try {
      const going = await this.runs.launch({ request, ...(label ? { label } : {}), ...(continued ? { continued } : {}) });
      going.done.catch((err: Error) => {
        this.services.log.error(`panel run ${going.runId}: ${err.message}`);
        void vscode.window.showErrorMessage(`Swarm: ${err.message}`);
      });
      return { runId: going.runId };
    } catch (err) {
      if (err instanceof LaunchError && !this.services.session.connection) {
        void vscode.window.showWarningMessage(`Swarm: ${err.message}.`, 'Connect', 'Start Local Simulator').then((pick) => {
          if (pick === 'Connect') void vscode.commands.executeCommand('swarmLab.connect');
          if (pick === 'Start Local Simulator') void vscode.commands.executeCommand('swarmLab.startSimulator');
        });
      }
      throw err;
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
      cancel: () => void this.runs.cancel(),
      progressSeen: (runId, seq) => this.runs.progressSeen(runId, seq),
      // As the palette's and the walltime warning's Drain Run: the run going, whoever started it.
      drain: () => void vscode.commands.executeCommand('swarmLab.drainRun'),
      requests: {
        run: ({ request }) => this.start(request),
        rerun: async ({ id }) => {
          const saved = await this.history.load(id);
          await this.onItsSwarm(saved, 'Rerun');
          return this.start(await this.history.rerunRequest(id), saved.record.label);
        },
        continueRun: async ({ id, only }) => {
          const saved = await this.history.load(id);
          await this.onItsSwarm(saved, only === 'failed' ? 'Rerun failed' : 'Run remaining');
          const { request, label, continuation } = await planContinuation(this.history, saved, only);
          return this.start(request, label, continuation);
        },
        importFile: () => importFile(),
        savePromptSet: ({ prompts }) => savePromptSet(prompts),
        openInEditor: ({ text, language }) => openInEditor(text, language),
        copy: ({ text }) => copy(text),
        connect: async ({ simulator }) => {
          void vscode.commands.executeCommand(simulator ? 'swarmLab.startSimulator' : 'swarmLab.connect');
          return null;
        },
        runDetached: async ({ request }) => {
          const started = await runOnCluster(this.services, request);
          this.post({ type: 'history', history: await this.history.list() });
          return started;
        },
        openRun: async ({ id, arm }) => {
          const detached = detachedOf(id, this.services.detached.list);
          this.showingDetached = detached ? { id, sent: `${detached.live} ${detached.done}` } : undefined;
          if (detached) return detachedOpened(detached, await detachedRows(detached, this.services.detached.remote));
          const saved = await this.history.load(id);
          return openedRun(saved, await this.history.jsonl(saved, arm), arm);
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
        fullRows: async ({ runId, indices }) => {
          // A run going: its live rows (what the page got cut); else its saved results (a comparison's: the arm the page shows).
          const rows = this.runs.rowsGoing(runId) ?? parseRows(await this.history.jsonl(await this.history.load(runId)));
          const wanted = indices && new Set(indices);
          return rowsJsonl(wanted ? rows.filter((r) => wanted.has(r.index)) : rows);
        },
        renameRun: async ({ id }) => {
          const saved = await this.history.load(id);
          const label = await vscode.window.showInputBox({ title: 'Swarm Lab: rename the run', value: saved.record.label, validateInput: (v) => (v.trim() ? undefined : 'A name cannot be empty.') });
          if (!label?.trim()) return null;
          await this.history.rename(id, label.trim());
          this.post({ type: 'history', history: await this.history.list() });
          return label.trim();
        },
        deleteRun: async ({ id }) => {
          if (this.runs.isGoing(id)) throw new Error('the run is still going');
          const saved = await this.history.load(id);
          const pick = await vscode.window.showWarningMessage(`Delete "${saved.record.label}" and its results?`, { modal: true }, 'Delete');
          if (pick !== 'Delete') return false;
          await this.history.delete(id);
          this.post({ type: 'history', history: await this.history.list() });
          return true;
        },
      },
    };
  }

  dispose(): void {
    this.feed.dispose();
    for (const s of this.subscriptions.splice(0)) s.dispose();
    this.panel?.dispose();
  }
}

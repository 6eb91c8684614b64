import * as vscode from 'vscode';
import type { HostMessage } from '../panel/protocol.ts';
import { ExperimentCodeLens, PromptSetCodeLens } from './codelens.ts';
import type { ScatterArgs, CompareArgs, TreeReduceArgs } from './commands/run.ts';
import type { EndpointView } from './connection.ts';
import type { LaunchArgs } from './commands/launch.ts';
import { DetachedRunsTree, type DetachedRun } from './detached-runs.ts';
import { RemoteRuns } from './detached-runs-remote.ts';
import { settings } from './settings.ts';
import { EndpointTree, type EndpointSort } from './endpoint-tree.ts';
import { SharedLogins } from '../core/tunnels/shared-logins.ts';
import { JobWatch } from './job-watch.ts';
import { ATTACHED_RUNS, windowState } from './window-state.ts';
import { publishHostfileContext } from './hostfiles.ts';
import { LazyPanel } from './lazy-panel.ts';
import { registerPanelSerializer } from './panel/panel-serializer.ts';
import { RunTracker } from './run-tracker.ts';
import { secretNames } from './endpoint-keys.ts';
import { ApiKeyStore } from './secrets.ts';
import type { Services } from './services.ts';
import { Session } from './session.ts';
import { SwarmStatusBar } from './status-bar.ts';

/** What the extension hands to other extensions and to its tests: read-only views of its state (and the panel's wire, for tests). */
export interface SwarmLabApi {
  snapshot(): {
    connected: boolean;
    source: string | null;
    endpoints: EndpointView[];
    running: boolean;
    statusBar: SwarmStatusBar['state'];
    /** The launched job followed: its id, phase, nodes and walltime left (seconds). */
    job: { id: string; name: string; phase: string | null; nodes: string[]; walltimeLeft: number | null; live: boolean } | null;
    /** The Endpoints view's rows as shown (summary row first), and its sort. */
    tree: { rows: EndpointTree['rows']; sort: EndpointSort };
    /** The Detached Runs view's runs as last read, newest first. */
    detachedRuns: readonly DetachedRun[];
  };
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

/**
 * Registers commands, the Endpoints view, the status bar and the CodeLens, nothing more: what the
 * commands do (the pool and its HTTP stack, SSH, runs, the panel) loads on their first use.
 */
export function activate(context: vscode.ExtensionContext): SwarmLabApi {
  const log = vscode.window.createOutputChannel('Swarm Lab', { log: true });
  const keys = new ApiKeyStore(context.secrets);
  const onDemand = () => import('./on-demand.ts');
  // The pool and its HTTP stack load on first connect: no part of activation.
  const session = new Session(keys, log, async (...args) => new (await onDemand()).SwarmConnection(...args));
  const runs = new RunTracker();
  const state = windowState(context);
  const jobs = new JobWatch(state);
  const detached = new DetachedRunsTree();
  const services: Services = { context, log, keys, session, runs, jobs, logins: new SharedLogins(), detached, state };
  const panel = new LazyPanel(services);
  const tree = new EndpointTree(runs, jobs);
  const statusBar = new SwarmStatusBar(runs, jobs);
  const detachedView = vscode.window.createTreeView('swarmLab.detachedRuns', { treeDataProvider: detached });
  session.onDidChange((c) => {
    tree.show(c);
    statusBar.show(c);
    // The runs on the login node, over the connected swarm's one SSH login.
    const master = c?.tunnel?.master;
    detached.setRemote(master ? new RemoteRuns(c.tunnel!.label, master, settings().remoteRunsFolder) : undefined);
  });

  const command = (id: string, run: (...args: never[]) => unknown) => vscode.commands.registerCommand(id, run as (...args: unknown[]) => unknown);
  context.subscriptions.push(
    log,
    session,
    runs,
    jobs,
    tree,
    statusBar,
    panel,
    registerPanelSerializer(() => panel.get()),
    vscode.window.registerTreeDataProvider('swarmLab.endpoints', tree),
    detached,
    detachedView,
    detached.watch(detachedView),
    command('swarmLab.refreshDetachedRuns', () => void detached.refresh()),
    command('swarmLab.attachDetachedRun', async (run?: DetachedRun | string) => (await onDemand()).attachDetachedRun(services, detached, run)),
    command('swarmLab.cancelDetachedRun', async (run?: DetachedRun | string) => (await onDemand()).cancelDetachedRun(services, detached, run)),
    command('swarmLab.resumeDetachedRun', async (run?: DetachedRun | string) => (await onDemand()).resumeDetachedRun(services, detached, run)),
    vscode.languages.registerCodeLensProvider(PromptSetCodeLens.selector, new PromptSetCodeLens()),
    vscode.languages.registerCodeLensProvider(ExperimentCodeLens.selector, new ExperimentCodeLens()),
    command('swarmLab.connect', async (uri?: vscode.Uri) => (await onDemand()).connect(services, uri)),
    command('swarmLab.runExperiment', async (uri?: vscode.Uri) => (await onDemand()).runExperiment(services, uri)),
    command('swarmLab.connectRemote', async (path?: string) => (await onDemand()).connectRemote(services, path)),
    command('swarmLab.disconnect', async () => (await onDemand()).disconnect(services)),
    command('swarmLab.reconnect', async () => (await onDemand()).reconnect(services)),
    command('swarmLab.refresh', () => session.connection?.refresh()),
    command('swarmLab.waitForServers', async (args?: { intervalSeconds?: number }) => (await onDemand()).waitForServers(services, args)),
    command('swarmLab.showUnhealthyOnly', () => tree.showUnhealthyOnly(true)),
    command('swarmLab.showAllEndpoints', () => tree.showUnhealthyOnly(false)),
    command('swarmLab.sortEndpoints', (order?: EndpointSort) => sortEndpoints(tree, order)),
    command('swarmLab.showSwarm', () => {
      runs.acknowledge();
      void vscode.commands.executeCommand('workbench.view.extension.swarmLab');
    }),
    command('swarmLab.openPanel', async () => void (await panel.get()).open()),
    command('swarmLab.scatter', async (args?: ScatterArgs) => (await onDemand()).scatter(services, await panel.get(), args)),
    command('swarmLab.treeReduce', async (args?: TreeReduceArgs) => (await onDemand()).treeReduceCommand(services, await panel.get(), args)),
    command('swarmLab.compare', async (args?: CompareArgs) => (await onDemand()).compare(services, await panel.get(), args)),
    command('swarmLab.startSimulator', async (args?: { count?: number }) => (await onDemand()).startSimulator(services, args)),
    command('swarmLab.setApiKey', (value?: string, name?: string) => setApiKey(services, value, name)),
    command('swarmLab.showLog', () => log.show()),
    command('swarmLab.cancelRun', () => runs.cancel()),
    command('swarmLab.launch', async (args?: LaunchArgs) => (await onDemand()).launch(services, args)),
    command('swarmLab.drainRun', async () => (await onDemand()).drainRun(services)),
    command('swarmLab.cancelJob', async (args?: { confirmed?: boolean }) => (await onDemand()).cancelJob(services, args && 'confirmed' in args ? args : {})),
    command('swarmLab.attachJob', async (name?: string) => (await onDemand()).attachJob(services, typeof name === 'string' ? name : undefined)),
    command('swarmLab.copyUrl', async (row?: { view: EndpointView }) => (await onDemand()).copyUrl(row)),
    command('swarmLab.openMetrics', async (row?: { view: EndpointView }) => (await onDemand()).openMetrics(services, row)),
    command('swarmLab.toggleExclude', async (row?: { view: EndpointView }) => (await onDemand()).toggleExclude(services, row)),
    keys.onDidChange(() => void session.rekey()),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('swarmLab.hostfilePatterns') && void publishHostfileContext()),
  );
  void publishHostfileContext();
  void vscode.commands.executeCommand('setContext', 'swarmLab.connected', false);
  // A job launched before the window reloaded is followed again (loads the launch code only if there is one).
  if (jobs.remembered().length) void onDemand().then((m) => m.restoreJobs(services));
  // …and so are the rows of detached runs it followed into files.
  if (state.get<string[]>(ATTACHED_RUNS, []).length) void onDemand().then((m) => m.restoreAttached(services, detached));

  return {
    snapshot: () => ({
      connected: Boolean(session.connection),
      source: session.connection?.source.label ?? null,
      endpoints: session.connection ? [...session.connection.snapshot] : [],
      running: Boolean(runs.running),
      statusBar: statusBar.state,
      job: jobs.job ? { id: jobs.job.record.id, name: jobs.job.record.name, phase: jobs.job.state?.phase ?? null, nodes: jobs.job.state?.nodes ?? [], walltimeLeft: jobs.walltimeLeft() ?? null, live: jobs.live } : null,
      tree: { rows: tree.rows, sort: tree.sort },
      detachedRuns: detached.list,
    }),
    panel: {
      state: () => panel.loaded?.state ?? { open: false, visible: false, ready: false },
      messages: () => panel.loaded?.messages() ?? [],
      receive: async (message) => (await panel.get()).receive(message),
      exportRun: async (id, format, path) => (await onDemand()).exportRun((await panel.get()).history, id, format, path),
      renameRun: async (id, label) => (await panel.get()).history.rename(id, label),
      deleteRun: async (id) => (await panel.get()).history.delete(id),
    },
  };
}

const SORTS: Array<{ label: string; order: EndpointSort }> = [
  { label: 'Hostfile order', order: 'hostfile' },
  { label: 'Name', order: 'name' },
  { label: 'Status (worst first)', order: 'status' },
  { label: 'Failure rate (highest first)', order: 'failure-rate' },
];

/** `Sort Endpoints…` in the view title: a quick pick, or the order given (tests). */
async function sortEndpoints(tree: EndpointTree, order?: EndpointSort): Promise<void> {
  const pick = order ?? (await vscode.window.showQuickPick(SORTS.map((s) => ({ ...s, picked: s.order === tree.sort })), { title: 'Swarm: sort endpoints by' }))?.order;
  if (pick) tree.sortBy(pick);
}

/**
 * `Swarm: Set API Key`: stored in SecretStorage (never in settings or logs); empty clears it. The
 * default key goes to endpoints whose line names none; `name` is a hostfile's `key=secret:NAME`
 * (asked for when the connected hostfile names some).
 */
async function setApiKey(services: Services, value?: string, name?: string): Promise<void> {
  let target = name;
  if (value === undefined && target === undefined) {
    const names = secretNames(services.session.connection?.endpoints ?? []);
    if (names.length) {
      const pick = await vscode.window.showQuickPick([{ label: 'Default key', description: 'endpoints whose hostfile line names no key' }, ...names.map((n) => ({ label: n, description: `key=secret:${n}`, name: n }))], { title: 'Swarm: which API key?' });
      if (!pick) return;
      target = 'name' in pick ? pick.name : undefined;
    }
  }
  const what = target === undefined ? "The vLLM servers' --api-key" : `The key of key=secret:${target}`;
  const key = value ?? (await vscode.window.showInputBox({ title: 'Swarm: API key', prompt: `${what}, sent as a Bearer token (stored in VS Code's secret storage). Empty clears it.`, password: true, ignoreFocusOut: true }));
  if (key === undefined) return;
  await services.keys.set(key.trim() || undefined, target);
  await services.session.rekey();
  services.log.info(`${target === undefined ? 'API key' : `key=secret:${target}`} ${key.trim() ? 'set' : 'cleared'}`);
}

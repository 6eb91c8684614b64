import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { JSON_SCHEMA, load } from 'js-yaml';
import * as vscode from 'vscode';
import { newRunId } from '../../core/runs/run-folder.ts';
import type { ExperimentHostMessage, ExperimentView, ExperimentViewMessage } from '../../panel/experiment-protocol.ts';
import { cliEnv } from '../cli-env.ts';
import type { Services } from '../services.ts';
import { ExperimentRunner } from './experiment-run.ts';
import { webviewPage } from '../webview-page.ts';

/** Experiment files: what the explorer's and the editor's menus offer the command on. */
const EXPERIMENT_FILE = /\.swarm\.ya?ml$/i;

/**
 * `Swarm: Run Experiment`: the experiment file (the one right-clicked or under the CodeLens, else the
 * active editor's, else one picked from the workspace's) run
 * by the bundled CLI into `<file>.runs/<run id>/`, shown in a view of its own: each run as it
 * finishes, the servers' readings against time beside the client's figures, then the sweep's table
 * and chart with the planner's prediction beside each run. Resolves when the experiment has ended.
 */
export async function runExperiment(services: Services, uri?: vscode.Uri): Promise<ExperimentView | null> {
  const file = await experimentFile(uri);
  if (!file) return null;
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showErrorMessage('Swarm: this workspace is not trusted, so Swarm Lab starts no processes (an experiment runs one).');
    return null;
  }
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === file);
  if (doc?.isDirty) await doc.save();
  const folder = join(`${file.replace(/\.swarm\.ya?ml$/i, '')}.runs`, newRunId());
  const cli = join(services.context.extensionPath, 'dist', 'cli.js');
  const panel = ExperimentPanel.open(services.context.extensionUri, basename(file));
  services.log.info(`experiment ${file}: runs go to ${folder}`);
  // The keys of the experiment's endpoints (SecretStorage's, by reference) reach the CLI through its environment only.
  const env = await cliEnv(services, await hostfileOf(file));
  const runner = new ExperimentRunner(cli, file, folder, env, (view) => panel.show(view));
  panel.onStop(() => runner.stop());
  panel.onDispose(() => runner.stop());
  panel.show(runner.view);
  const view = await runner.done;
  services.log.info(`experiment ${file}: ${view.status}${view.exitCode === null ? '' : ` (exit ${view.exitCode})`}${view.error ? `: ${view.error}` : ''}`);
  if (view.status === 'failed') void vscode.window.showErrorMessage(`Swarm: experiment ${basename(file)} failed: ${view.error ?? `exit ${view.exitCode}`}`);
  return view;
}

/**
 * The file to run: the one the command was given (menu, CodeLens), else the active editor's experiment
 * file, else one the user picks among the workspace's (from the palette). Undefined when there is none
 * or the pick was dismissed.
 */
async function experimentFile(uri?: vscode.Uri): Promise<string | undefined> {
  if (uri instanceof vscode.Uri) {
    if (EXPERIMENT_FILE.test(uri.fsPath)) return uri.fsPath;
    void vscode.window.showErrorMessage(`Swarm: Run Experiment runs an experiment file (*.swarm.yaml), not ${basename(uri.fsPath)}.`);
    return undefined;
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active?.scheme === 'file' && EXPERIMENT_FILE.test(active.fsPath)) return active.fsPath;
  const found = await vscode.workspace.findFiles('**/*.swarm.{yaml,yml}', '**/{node_modules,.git}/**', MOST_PICKED);
  if (!found.length) {
    void vscode.window.showErrorMessage('Swarm: Run Experiment found no experiment file (*.swarm.yaml) in the workspace: write one (docs/cli.md, "swarm run"), or open one.');
    return undefined;
  }
  const items = found
    .map((u) => ({ label: basename(u.fsPath), description: vscode.workspace.asRelativePath(dirname(u.fsPath)), path: u.fsPath }))
    .sort((a, b) => a.description.localeCompare(b.description) || a.label.localeCompare(b.label));
  const picked = await vscode.window.showQuickPick(items, { title: 'Swarm: Run Experiment', placeHolder: 'The experiment file (*.swarm.yaml) to run', matchOnDescription: true });
  return picked?.path;
}

/** Experiment files offered by the palette's pick, at most (a workspace of thousands lists the first). */
const MOST_PICKED = 500;

/** The experiment's hostfile (`endpoints.hostfile`, relative to the file), for the keys it names; undefined when unreadable (the CLI then says why). */
async function hostfileOf(file: string): Promise<string | undefined> {
  try {
    const doc = load(await readFile(file, 'utf8'), { schema: JSON_SCHEMA }) as { endpoints?: { hostfile?: unknown } } | null;
    const hostfile = doc?.endpoints?.hostfile;
    return typeof hostfile === 'string' && hostfile ? resolve(dirname(file), hostfile) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One experiment's view: a webview panel under the panel's strict CSP (scripts by nonce, nothing
 * remote), loading dist/webview/experiment.js. It waits for the view's `ready`, then sends the latest
 * state, and again on every change; `stop` from the view ends the run.
 */
export class ExperimentPanel {
  static readonly viewType = 'swarmLab.experiment';
  private latest: ExperimentView | null = null;
  private ready = false;
  private stop: () => void = () => {};
  private readonly disposed: Array<() => void> = [];

  private constructor(private readonly panel: vscode.WebviewPanel) {
    panel.webview.onDidReceiveMessage((m: ExperimentViewMessage) => {
      if (m?.type === 'ready') {
        this.ready = true;
        if (this.latest) this.post(this.latest);
      } else if (m?.type === 'stop') this.stop();
    });
    // Hidden and shown again, the webview starts over: it says `ready` again.
    panel.onDidChangeViewState(() => {
      if (!panel.visible) this.ready = false;
    });
    panel.onDidDispose(() => this.disposed.forEach((f) => f()));
  }

  static open(extensionUri: vscode.Uri, name: string): ExperimentPanel {
    const root = vscode.Uri.joinPath(extensionUri, 'dist', 'webview');
    const panel = vscode.window.createWebviewPanel(ExperimentPanel.viewType, `Experiment: ${name}`, vscode.ViewColumn.Active, { enableScripts: true, localResourceRoots: [root] });
    panel.webview.html = experimentHtml(panel.webview, root);
    return new ExperimentPanel(panel);
  }

  show(view: ExperimentView): void {
    this.latest = view;
    if (this.ready) this.post(view);
  }

  onStop(stop: () => void): void {
    this.stop = stop;
  }

  onDispose(f: () => void): void {
    this.disposed.push(f);
  }

  private post(view: ExperimentView): void {
    const message: ExperimentHostMessage = { type: 'experiment', view };
    void this.panel.webview.postMessage(message);
  }
}

function experimentHtml(webview: vscode.Webview, root: vscode.Uri): string {
  return webviewPage(webview, root, 'experiment.js', [{ file: 'experiment.css' }], 'Swarm Lab experiment');
}

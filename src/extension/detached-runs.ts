import { hostname } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { listRuns, runsRoot } from '../core/runs/run-folder.ts';
import { liveState, processAlive } from '../core/runs/status.ts';
import type { DetachedRun, RemoteRuns } from './detached-runs-remote.ts';

export type { DetachedRun };


/** How often the view reads the status files while it is visible and a run goes on (each is a few hundred bytes). */
const LIVE_MS = 1_000;
/** …and while nothing runs (a run started from a terminal shows up within this). */
const IDLE_MS = 5_000;

const int = (n: number) => n.toLocaleString('en-US');

/**
 * The "Detached Runs" view: the runs under the runs folder (`$SWARM_RUNS_DIR`, else
 * `~/.swarm-lab/runs`, as `swarm runs` reads them), from their status files only, so a window
 * reloaded (or opened while runs go on) shows them as they are; and, while a swarm is connected
 * through an SSH login, the runs on that login node, read over the same login. Polled while visible.
 */
export class DetachedRunsTree implements vscode.TreeDataProvider<DetachedRun>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private runs: DetachedRun[] = [];
  private here: DetachedRun[] = [];
  private there: DetachedRun[] = [];
  private reading: Promise<void> | undefined;
  private remoteRuns: RemoteRuns | undefined;
  /** Why the login node's runs could not be read last time (shown once per change). */
  remoteError: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private visible = false;
  /** Others reading the list while the view is hidden (an open panel's History): polled for them too. */
  private wanted = 0;
  private lastRead = 0;
  readonly root = runsRoot();

  /** The runs as last read (newest first). */
  get list(): readonly DetachedRun[] {
    return this.runs;
  }

  /** Re-reads the status files now and redraws when something moved. */
  refresh(): readonly DetachedRun[] {
    const here = hostname();
    this.here = listRuns(this.root)
      .reverse()
      .map((s) => ({ ...s, live: liveState(s, here, processAlive), folder: join(this.root, s.id) }));
    this.lastRead = Date.now();
    this.update();
    void this.readRemote();
    return this.runs;
  }

  /** The login node whose runs to show too (the connected swarm's SSH login), or none. */
  setRemote(remote: RemoteRuns | undefined): void {
    this.remoteRuns = remote;
    this.there = [];
    this.remoteError = undefined;
    this.update();
    void this.readRemote();
  }

  /** The login node's runs as last read (one command at a time over the login). */
  get remote(): RemoteRuns | undefined {
    return this.remoteRuns;
  }

  private readRemote(): Promise<void> {
    const remote = this.remoteRuns;
    if (!remote || this.reading) return this.reading ?? Promise.resolve();
    this.reading = remote
      .list()
      .then(
        (runs) => {
          if (remote !== this.remoteRuns) return;
          this.there = runs;
          this.remoteError = undefined;
          this.update();
        },
        (err: unknown) => {
          this.remoteError = (err as Error).message;
        },
      )
      .finally(() => (this.reading = undefined));
    return this.reading;
  }

  private update(): void {
    const next = [...this.here, ...this.there];
    if (JSON.stringify(next) === JSON.stringify(this.runs)) return;
    this.runs = next;
    this.changed.fire();
  }

  /** Polls while the view is shown: each second while a run goes on, else every few seconds. */
  watch(view: vscode.TreeView<DetachedRun>): vscode.Disposable {
    const tick = () => {
      const busy = this.runs.some((r) => r.live === 'running' || r.live === 'starting');
      if ((this.visible || this.wanted > 0) && Date.now() - this.lastRead >= (busy ? LIVE_MS : IDLE_MS) - 50) this.refresh();
    };
    this.visible = view.visible;
    this.timer = setInterval(tick, LIVE_MS);
    return view.onDidChangeVisibility((e) => {
      this.visible = e.visible;
      if (e.visible) this.refresh();
    });
  }

  /** Keeps the list read (as while the view is shown) until the returned disposable is disposed. */
  want(): vscode.Disposable {
    this.wanted++;
    if (!this.lastRead) this.refresh();
    let done = false;
    return new vscode.Disposable(() => {
      if (!done) this.wanted--;
      done = true;
    });
  }

  getChildren(element?: DetachedRun): DetachedRun[] {
    if (element) return [];
    if (!this.lastRead) this.refresh();
    return this.runs;
  }

  getTreeItem(run: DetachedRun): vscode.TreeItem {
    const item = new vscode.TreeItem(run.id, vscode.TreeItemCollapsibleState.None);
    item.id = `${run.login ?? ''}/${run.id}`;
    item.description = `${describeRun(run)}${run.login ? ` · on ${run.login}` : ''}`;
    const said = [...run.errors.slice(-3).map((e) => `error: ${e}`), ...(run.warnings ?? []).slice(-3).map((w) => `warning: ${w}`)];
    item.tooltip = `swarm ${run.command.join(' ')}\n${run.folder}${said.length ? `\n\n${said.join('\n')}` : ''}`;
    item.iconPath = new vscode.ThemeIcon(ICONS[run.live === 'finished' ? (run.exitCode === 0 ? 'ok' : 'bad') : run.live]);
    item.contextValue = `detachedRun.${run.live}${run.login ? '.remote' : ''}`;
    return item;
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.changed.dispose();
  }
}

const ICONS: Record<string, string> = { starting: 'loading~spin', running: 'sync~spin', ok: 'pass', bad: 'error', died: 'warning', elsewhere: 'remote' };

/** `running · 1,234/10,000 · 2 failed · 12.3 s` (the state with its exit code once finished). */
export function describeRun(run: DetachedRun): string {
  const state = run.live === 'finished' ? `finished (exit ${run.exitCode})` : run.live;
  const failed = run.failed ? ` · ${int(run.failed)} failed` : '';
  const cancelled = run.cancelled ? ` · ${int(run.cancelled)} cancelled` : '';
  return `${state} · ${int(run.done)}/${int(run.total)}${failed}${cancelled} · ${(run.wallMs / 1000).toFixed(1)} s`;
}

import type * as vscode from 'vscode';
import type { SharedLogins } from '../core/tunnels/shared-logins.ts';
import type { JobWatch } from './job-watch.ts';
import type { RunTracker } from './run-tracker.ts';
import type { ApiKeyStore } from './secrets.ts';
import type { Session } from './session.ts';
import type { DetachedRunsTree } from './detached-runs.ts';

/** What every command needs, made once at activation. */
export interface Services {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  keys: ApiKeyStore;
  session: Session;
  runs: RunTracker;
  /** The launched job this window follows. */
  jobs: JobWatch;
  /** This window's SSH logins, one per login node, shared by every connection and job. */
  logins: SharedLogins;
  /** The detached runs (here, and on the connected login node), as the Detached Runs view and History list them. */
  detached: DetachedRunsTree;
  /** What this window follows (launched jobs, attached detached runs), kept on disk: it must outlive a reload. */
  state: vscode.Memento;
}

import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';

/** The folder a window keeps its files in: the workspace's `.swarm/` (the extension's storage without a folder). */
export function swarmFolder(context: vscode.ExtensionContext): string {
  return join(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? context.globalStorageUri.fsPath, '.swarm');
}

/** The window's state that must outlive a reload. */
export const windowState = (context: vscode.ExtensionContext) => new FileMemento(join(swarmFolder(context), 'window-state.json'));

/** In the window's state: the runs whose rows it follows into files (run ids, and a login-node run's as `login/id`). */
export const ATTACHED_RUNS = 'swarmLab.attachedRuns';

/**
 * A Memento kept in a JSON file (the workspace's `.swarm/window-state.json`), for what must survive
 * a reload: the jobs and detached runs a window follows. VS Code's workspaceState does not, in a web
 * window (code-server): its write goes to IndexedDB a moment later, and a reload within that moment
 * drops it, so a run attached just before a reload was no longer followed after it.
 *
 * Read afresh at each `get` (another window of the same folder may have written since) and written
 * whole through a rename, so a crash leaves the old file or the new one, never half of one.
 */
export class FileMemento implements vscode.Memento {
  private writing = Promise.resolve();

  constructor(readonly file: string) {}

  keys(): readonly string[] {
    return Object.keys(this.read());
  }

  get<T>(key: string): T | undefined;
  get<T>(key: string, defaultValue: T): T;
  get<T>(key: string, defaultValue?: T): T | undefined {
    const value = this.read()[key];
    return value === undefined ? defaultValue : (value as T);
  }

  /** Writes one after another, each over the file as it is then (a key another window set is kept). */
  update(key: string, value: unknown): Thenable<void> {
    const write = this.writing.then(() => {
      const state = this.read();
      if (value === undefined) delete state[key];
      else state[key] = value;
      mkdirSync(dirname(this.file), { recursive: true });
      const next = `${this.file}.${process.pid}.tmp`;
      writeFileSync(next, `${JSON.stringify(state, null, 2)}\n`);
      renameSync(next, this.file);
    });
    this.writing = write.catch(() => {});
    return write;
  }

  private read(): Record<string, unknown> {
    try {
      const state: unknown = JSON.parse(readFileSync(this.file, 'utf8'));
      return state && typeof state === 'object' && !Array.isArray(state) ? (state as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
}

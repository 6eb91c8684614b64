import * as vscode from 'vscode';
import { OrderedJsonlWriter, type Run } from '../core/index.ts';
import { settings } from './settings.ts';

/** A run's results file, ready before the run starts so no result is missed. */
export interface ResultsFile {
  uri: vscode.Uri;
  /** Call right after creating the run (before it starts); resolves once every result is on disk. */
  follow(run: Run<unknown>): Promise<void>;
}

/**
 * Where a run's results go: `<runs folder>/<timestamp>-<pattern>.jsonl` in the first workspace
 * folder (or the extension's storage with no folder open), one line per prompt, in input order,
 * written as results arrive.
 */
export async function resultsFile(storage: vscode.Uri, pattern: string): Promise<ResultsFile> {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri ?? storage;
  const folder = vscode.Uri.joinPath(root, settings().runsFolder);
  await vscode.workspace.fs.createDirectory(folder);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 23);
  const uri = vscode.Uri.joinPath(folder, `${stamp}-${pattern}.jsonl`);
  return {
    uri,
    follow: (run) => {
      const writer = new OrderedJsonlWriter(uri.fsPath);
      run.on('result', (r) => writer.add(r));
      return run.done.then(() => writer.close());
    },
  };
}

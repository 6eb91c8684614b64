import * as vscode from 'vscode';
import { OrderedJsonlWriter, type Run } from '../core/index.ts';
import { settings } from './settings.ts';

/**
 * Where a run's results go: `<runs folder>/<timestamp>-<pattern>.jsonl` in the first workspace
 * folder (or the extension's storage with no folder open), one line per prompt, in input order,
 * written as results arrive.
 */
export async function resultsWriter(run: Run<unknown>, storage: vscode.Uri, pattern: string): Promise<{ uri: vscode.Uri; done: Promise<void> }> {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri ?? storage;
  const folder = vscode.Uri.joinPath(root, settings().runsFolder);
  await vscode.workspace.fs.createDirectory(folder);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 23);
  const uri = vscode.Uri.joinPath(folder, `${stamp}-${pattern}.jsonl`);
  const writer = new OrderedJsonlWriter(uri.fsPath);
  run.on('result', (r) => writer.add(r));
  return { uri, done: run.done.then(() => writer.close()) };
}

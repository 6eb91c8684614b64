import * as vscode from 'vscode';
import { settings } from './settings.ts';

/**
 * Where a run's results go: `<runs folder>/<timestamp>-<pattern>.jsonl` in the first workspace
 * folder (or the extension's storage with no folder open). The folder exists when this returns;
 * create the file before the run, so no result is missed.
 */
export async function resultsFile(storage: vscode.Uri, pattern: string): Promise<{ uri: vscode.Uri }> {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri ?? storage;
  const folder = vscode.Uri.joinPath(root, settings().runsFolder);
  await vscode.workspace.fs.createDirectory(folder);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 23);
  return { uri: vscode.Uri.joinPath(folder, `${stamp}-${pattern}.jsonl`) };
}

import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { PromptRow } from '../../panel/protocol.ts';

/** Files the panel imports are read whole and sent to it; beyond this size they are refused. */
const IMPORT_LIMIT_BYTES = 256 * 1024 * 1024;

function workspaceRoot(): vscode.Uri | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri;
}

/** `importFile`: an open dialog for JSONL / TXT / CSV; the file's name and text (the webview parses it). */
export async function importFile(): Promise<{ name: string; text: string } | null> {
  const root = workspaceRoot();
  const picked = await vscode.window.showOpenDialog({
    title: 'Swarm Lab: import prompts',
    canSelectMany: false,
    openLabel: 'Import',
    filters: { 'Prompt sets': ['jsonl', 'txt', 'csv'], 'All files': ['*'] },
    ...(root ? { defaultUri: root } : {}),
  });
  const uri = picked?.[0];
  if (!uri) return null;
  const { size } = await vscode.workspace.fs.stat(uri);
  if (size > IMPORT_LIMIT_BYTES) throw new Error(`${basename(uri.fsPath)} is ${(size / 2 ** 20).toFixed(0)} MiB; the panel imports files up to ${IMPORT_LIMIT_BYTES / 2 ** 20} MiB`);
  return { name: basename(uri.path), text: new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)) };
}

/** The JSONL of a prompt set: `{"prompt": …}` plus the row's other fields, one a line. */
export function promptSetJsonl(prompts: readonly PromptRow[]): string {
  return prompts.map((p) => JSON.stringify({ ...p.input, prompt: p.prompt })).join('\n') + (prompts.length ? '\n' : '');
}

/** `savePromptSet`: a save dialog, then the set as `*.prompts.jsonl` (the name gets that ending if it lacks it). */
export async function savePromptSet(prompts: readonly PromptRow[], target?: vscode.Uri): Promise<string | null> {
  const root = workspaceRoot();
  let uri =
    target ??
    (await vscode.window.showSaveDialog({
      title: 'Swarm Lab: save the prompt set',
      saveLabel: 'Save',
      filters: { 'Prompt sets': ['jsonl'] },
      ...(root ? { defaultUri: vscode.Uri.joinPath(root, 'prompts.prompts.jsonl') } : {}),
    }));
  if (!uri) return null;
  if (!uri.path.endsWith('.prompts.jsonl')) uri = uri.with({ path: uri.path.replace(/(\.jsonl)?$/, '.prompts.jsonl') });
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(promptSetJsonl(prompts)));
  return uri.fsPath;
}

/** `openInEditor`: the text in an untitled editor beside the panel. */
export async function openInEditor(text: string, language = 'plaintext'): Promise<null> {
  const known = await vscode.languages.getLanguages();
  const doc = await vscode.workspace.openTextDocument({ content: text, language: known.includes(language) ? language : 'plaintext' });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  return null;
}

export async function copy(text: string): Promise<null> {
  await vscode.env.clipboard.writeText(text);
  return null;
}

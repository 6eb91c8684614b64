import * as vscode from 'vscode';
import { parsePrompts, PromptFileError, type PromptInput } from '../core/index.ts';

/**
 * Prompts for a run: a file given by URI (CodeLens), else the active editor's selection or whole
 * text (JSONL `{"prompt": …}` or one prompt per line), else one typed in an input box.
 */
export async function promptsFrom(uri?: vscode.Uri): Promise<{ prompts: PromptInput[]; label: string } | undefined> {
  const doc = uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
  if (doc && !(uri === undefined && doc.uri.scheme === 'output')) {
    const editor = vscode.window.activeTextEditor;
    const selection = !uri && editor && editor.document === doc && !editor.selection.isEmpty ? editor.selection : undefined;
    const text = doc.getText(selection);
    const name = vscode.workspace.asRelativePath(doc.uri);
    try {
      const prompts = parsePrompts(text, name);
      return { prompts, label: selection ? `selection of ${name}` : name };
    } catch (err) {
      if (!(err instanceof PromptFileError)) throw err;
      void vscode.window.showErrorMessage(`Swarm: ${err.message.split('\n').slice(0, 3).join('; ')}`);
      return undefined;
    }
  }
  const typed = await vscode.window.showInputBox({ title: 'Swarm: prompt', prompt: 'No prompt file is open: type one prompt to send to every selected endpoint' });
  return typed ? { prompts: [{ prompt: typed }], label: 'typed prompt' } : undefined;
}

import * as vscode from 'vscode';

/** "Scatter these prompts" above prompt-set files (`*.prompts.jsonl`, `*.prompts.txt`). */
export class PromptSetCodeLens implements vscode.CodeLensProvider {
  static readonly selector: vscode.DocumentSelector = [{ pattern: '**/*.prompts.{jsonl,txt}' }];

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const range = new vscode.Range(0, 0, 0, 0);
    return [
      new vscode.CodeLens(range, { title: '$(run-all) Scatter these prompts', command: 'swarmLab.scatter', arguments: [{ uri: doc.uri }] }),
      new vscode.CodeLens(range, { title: 'Compare batched vs individual', command: 'swarmLab.compare', arguments: [{ uri: doc.uri }] }),
    ];
  }
}

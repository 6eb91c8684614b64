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

/** "Run this experiment" above experiment files (`*.swarm.yaml`): where a user editing one looks for it. */
export class ExperimentCodeLens implements vscode.CodeLensProvider {
  static readonly selector: vscode.DocumentSelector = [{ pattern: '**/*.swarm.{yaml,yml}' }];

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    return [new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), { title: '$(beaker) Run this experiment', command: 'swarmLab.runExperiment', arguments: [doc.uri] })];
  }
}

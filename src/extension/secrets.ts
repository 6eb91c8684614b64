import * as vscode from 'vscode';

const KEY = 'swarmLab.apiKey';

/** The vLLM `--api-key`, kept in SecretStorage only: never in settings, never in logs. */
export class ApiKeyStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  get(): Thenable<string | undefined> {
    return this.secrets.get(KEY);
  }

  async set(value: string | undefined): Promise<void> {
    if (value) await this.secrets.store(KEY, value);
    else await this.secrets.delete(KEY);
  }

  onDidChange(listener: () => void): vscode.Disposable {
    return this.secrets.onDidChange((e) => e.key === KEY && listener());
  }
}

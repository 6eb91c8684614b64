import * as vscode from 'vscode';

const DEFAULT_KEY = 'swarmLab.apiKey';
/** Named keys (`key=secret:NAME` in a hostfile) live under this prefix. */
const NAMED_KEY = 'swarmLab.key.';

/**
 * API keys, kept in SecretStorage only: never in settings, never in logs. The default key goes to
 * endpoints whose hostfile line names none; `key=secret:NAME` lines take the key stored under NAME.
 */
export class ApiKeyStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  get(name?: string): Thenable<string | undefined> {
    return this.secrets.get(storageKey(name));
  }

  async set(value: string | undefined, name?: string): Promise<void> {
    if (value) await this.secrets.store(storageKey(name), value);
    else await this.secrets.delete(storageKey(name));
  }

  onDidChange(listener: () => void): vscode.Disposable {
    return this.secrets.onDidChange((e) => (e.key === DEFAULT_KEY || e.key.startsWith(NAMED_KEY)) && listener());
  }
}

const storageKey = (name: string | undefined) => (name === undefined ? DEFAULT_KEY : `${NAMED_KEY}${name}`);

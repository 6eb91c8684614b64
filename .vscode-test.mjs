// `npm run test:desktop`: the extension-host suites in desktop VS Code via @vscode/test-cli, for
// machines that can download VS Code. CI (offline) runs the same suites in code-server instead
// (test/vscode-extension.test.ts).
import { defineConfig } from '@vscode/test-cli';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default defineConfig({
  files: 'dist-test/desktop/*.test.cjs',
  version: '1.99.3',
  workspaceFolder: mkdtempSync(join(tmpdir(), 'swarm-desktop-ws-')),
  mocha: { ui: 'bdd', timeout: 30_000 },
});

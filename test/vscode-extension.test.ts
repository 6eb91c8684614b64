import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { codeServerAvailable, runExtensionHostTests } from './helpers/code-server.ts';
import { ROOT } from './helpers/cli.ts';

describe('the extension in a real VS Code (code-server) extension host', { skip: codeServerAvailable ? false : 'code-server is not installed (scripts/install-code-server.sh)' }, () => {
  it('passes test/extension-host/suite/*.test.ts', async (t) => {
    for (const script of ['build.mjs', 'build-extension-tests.mjs']) {
      const built = spawnSync(process.execPath, [join(ROOT, 'scripts', script)], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(built.status, 0, `${script}: ${built.stdout}${built.stderr}`);
    }
    const workspace = await mkdtemp(join(tmpdir(), 'swarm-ext-ws-'));
    try {
      const { code, log } = await runExtensionHostTests({
        extensionPath: ROOT,
        testsEntry: join(ROOT, 'dist-test', 'extension-host.cjs'),
        workspace,
        timeoutMs: 180_000,
      });
      t.diagnostic(log.trim());
      assert.equal(code, 0, log);
      assert.match(log, /# result: \d+ test\(s\), 0 failed/);
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  });
});

/**
 * Self-test of the real-VS-Code harness (test/helpers/code-server.ts, test/helpers/workbench.ts,
 * test/extension-host/ + scripts/build-extension-tests.mjs) with a throw-away fixture extension made in a
 * temp dir: mocha suites in code-server's extension host (a passing run exits 0, a failing one 1), then
 * the workbench in headless Chromium (palette, notification, explorer context menu, tree view, status bar,
 * screenshot). Afterwards no process started here may be left.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { codeServerAvailable, CODE_SERVER_DIR, removeOnExit, runExtensionHostTests, startCodeServer } from './helpers/code-server.ts';
import {
  CHROMIUM,
  explorerContextMenu,
  explorerContextMenuItems,
  explorerRow,
  rightClickRow,
  openWorkbench,
  runCommand,
  screenshot,
  statusBarItem,
  treeRows,
  waitForNotification,
} from './helpers/workbench.ts';
import { patience } from './helpers/patience.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SCREENSHOT = join(ROOT, '.tmp', 'screenshots', 'harness.png');

const skip = !codeServerAvailable
  ? `code-server is not installed in ${CODE_SERVER_DIR}: run scripts/install-code-server.sh`
  : !existsSync(CHROMIUM)
    ? `${CHROMIUM} is missing: run scripts/install-code-server.sh`
    : false;

// Every process this file starts inherits this tag, so the teardown check finds exactly ours.
const TAG = `SWARM_HARNESS_RUN=${randomUUID()}`;
process.env.SWARM_HARNESS_RUN = TAG.split('=')[1]!;

function taggedProcesses(): string[] {
  const out: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || +name === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))) continue;
      if (!readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(TAG)) continue;
      out.push(`${name} ${readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 150)}`);
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

const FIXTURE_PACKAGE = {
  name: 'harness-fixture',
  displayName: 'Harness Fixture',
  publisher: 'swarm-lab-test',
  version: '0.0.1',
  engines: { vscode: '^1.90.0' },
  main: './extension.js',
  activationEvents: ['onStartupFinished'],
  contributes: {
    commands: [{ command: 'harnessFixture.hello', title: 'Say Hello to the Harness', category: 'Harness Fixture' }],
    menus: { 'explorer/context': [{ command: 'harnessFixture.hello', group: 'navigation@99', when: 'resourceExtname == .txt' }] },
    views: { explorer: [{ id: 'harnessFixture.rows', name: 'Harness Rows' }] },
  },
};

const FIXTURE_EXTENSION = `
const vscode = require('vscode');
const path = require('path');
exports.activate = (context) => {
  context.subscriptions.push(vscode.commands.registerCommand('harnessFixture.hello', (uri) => {
    const where = uri && uri.fsPath ? path.basename(uri.fsPath) : 'the palette';
    vscode.window.showInformationMessage('Harness fixture says hello from ' + where);
    return 'hello:' + where;
  }));
  const item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 1000);
  item.text = '$(beaker) Harness ready';
  item.show();
  context.subscriptions.push(item);
  const rows = [{ label: 'alpha', description: '1/3' }, { label: 'beta', description: '2/3' }];
  context.subscriptions.push(vscode.window.registerTreeDataProvider('harnessFixture.rows', {
    getChildren: (el) => (el ? [] : rows),
    getTreeItem: (el) => Object.assign(new vscode.TreeItem(el.label), { description: el.description }),
  }));
};
exports.deactivate = () => {};
`;

// BDD globals in one file, TDD names imported from 'mocha' in the other: the runner offers both.
const PASSING_BDD = `
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
describe('fixture (bdd)', () => {
  it('has the fixture command registered and runs it', async () => {
    const ext = vscode.extensions.getExtension('swarm-lab-test.harness-fixture');
    assert.ok(ext, 'fixture extension loaded');
    await ext.activate();
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('harnessFixture.hello'));
    assert.equal(await vscode.commands.executeCommand('harnessFixture.hello'), 'hello:the palette');
  });
  it('opened the workspace folder', () => {
    assert.equal(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, process.env.HARNESS_EXPECT_WORKSPACE);
  });
});
`;
const PASSING_TDD = `
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { suite, test } from 'mocha';
suite('fixture (tdd)', () => {
  test('runs in the Node extension host of VS Code 1.99.3', () => {
    assert.equal(vscode.version, '1.99.3');
    assert.equal(typeof process.versions.node, 'string');
  });
});
`;
const FAILING = `
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
describe('fixture (failing)', () => {
  it('passes', () => assert.ok(vscode.commands));
  it('fails on purpose', () => assert.equal(1 + 1, 3, 'deliberate failure'));
});
`;

describe('VS Code harness (code-server + Chromium)', { skip, timeout: patience(120_000) }, () => {
  let root = '';
  let extension = '';
  let workspace = '';
  const t0 = Date.now();

  async function buildSuites(name: string, files: Record<string, string>): Promise<string> {
    const dir = join(root, name);
    await mkdir(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
    const out = join(root, `${name}.cjs`);
    const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-extension-tests.mjs'), '--suites', dir, '--out', out], {
      encoding: 'utf8',
    });
    assert.equal(built.status, 0, `build-extension-tests failed:\n${built.stdout}${built.stderr}`);
    return out;
  }

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'harness-'));
    removeOnExit(root); // also when interrupted
    extension = join(root, 'fixture-ext');
    workspace = join(root, 'ws');
    await mkdir(extension, { recursive: true });
    await mkdir(workspace, { recursive: true });
    await writeFile(join(extension, 'package.json'), JSON.stringify(FIXTURE_PACKAGE, null, 2));
    await writeFile(join(extension, 'extension.js'), FIXTURE_EXTENSION);
    await writeFile(join(workspace, 'readme.txt'), 'hello\n');
    await writeFile(join(workspace, 'notes.md'), '# notes\n');
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
    console.log(`# harness self-test: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });

  test('extension-host tests: a passing mocha run exits 0 and its log comes back; a failing one exits 1', async () => {
    const [passing, failing] = await Promise.all([
      buildSuites('suite-pass', { 'a.test.ts': PASSING_BDD, 'b.test.ts': PASSING_TDD }),
      buildSuites('suite-fail', { 'c.test.ts': FAILING }),
    ]);
    // The two runs share nothing (own servers, ports, browsers): run them side by side.
    const started = Date.now();
    const [ok, bad] = await Promise.all([
      runExtensionHostTests({
        extensionPath: extension,
        testsEntry: passing,
        workspace,
        env: { HARNESS_EXPECT_WORKSPACE: workspace },
        timeoutMs: 60_000,
      }),
      runExtensionHostTests({ extensionPath: extension, testsEntry: failing, workspace, timeoutMs: 60_000 }),
    ]);
    console.log(`# two extension-host runs side by side: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    assert.equal(ok.code, 0, ok.log);
    assert.match(ok.log, /has the fixture command registered and runs it/);
    assert.match(ok.log, /runs in the Node extension host of VS Code 1\.99\.3/);
    assert.match(ok.log, /3 passing/);
    assert.match(ok.log, /# result: 3 test\(s\), 0 failed/);
    assert.equal(bad.code, 1, bad.log);
    assert.match(bad.log, /1 passing/);
    assert.match(bad.log, /1 failing/);
    assert.match(bad.log, /deliberate failure/);
    assert.match(bad.log, /c\.test\.ts/); // stack traces map back to the suite source
  });

  test('workbench: palette command, notification, explorer context menu, tree rows, status bar, screenshot', async () => {
    const started = Date.now();
    const server = await startCodeServer({ workspace });
    const wb = await openWorkbench(server, workspace, { extensionDevelopmentPath: extension }).catch(async (e) => {
      await server.stop();
      throw e;
    });
    const { page } = wb;
    try {
      await runCommand(page, 'Harness Fixture: Say Hello to the Harness');
      assert.match(await waitForNotification(page, /hello from the palette/), /^Harness fixture says hello from the palette$/);

      const status = await statusBarItem(page, /Harness ready/);
      assert.equal(status.text, 'Harness ready');

      const rows = await treeRows(page, 'Harness Rows');
      assert.deepEqual(
        rows.map(({ label, description }) => ({ label, description })),
        [
          { label: 'alpha', description: '1/3' },
          { label: 'beta', description: '2/3' },
        ],
      );

      const items = await explorerContextMenuItems(page, 'readme.txt');
      assert.ok(items.includes('Say Hello to the Harness'), items.join(' | '));
      assert.ok(!(await explorerContextMenuItems(page, 'notes.md')).includes('Say Hello to the Harness'), 'when clause honoured');

      await rightClickRow(page, explorerRow(page, 'readme.txt'));
      await page.locator('.context-view .monaco-menu').waitFor();
      await screenshot(page, SCREENSHOT);
      await explorerContextMenu(page, 'readme.txt', 'Say Hello to the Harness');
      assert.match(await waitForNotification(page, /hello from readme\.txt/), /^Harness fixture says hello from readme\.txt$/);
      console.log(`# workbench flow: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    } catch (e) {
      await screenshot(page, SCREENSHOT.replace(/\.png$/, '-failure.png')).catch(() => {});
      throw new Error(`${(e as Error).message}\n--- browser console ---\n${wb.consoleLog().slice(-30).join('\n')}`, { cause: e });
    } finally {
      await wb.close();
      await server.stop();
    }
  });

  test('nothing this file started is still running', async () => {
    let left = taggedProcesses();
    for (let i = 0; i < 20 && left.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = taggedProcesses();
    }
    assert.deepEqual(left, []);
  });
});

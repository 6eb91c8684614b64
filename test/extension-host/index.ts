/**
 * Mocha runner for code-server's extension host (the `extensionTestsPath` entry). scripts/build-extension-tests.mjs
 * bundles this file with every test/extension-host/suite/*.test.ts into dist-test/extension-host.cjs; the
 * suites reach it through the virtual module below, each loaded only when run() is called.
 *
 * Suites may use the BDD (describe/it/before/after…) or the TDD (suite/test/setup/teardown…) globals, or
 * import the same names from 'mocha'. `import * as vscode from 'vscode'` works (the extension host provides it).
 *
 * Environment (inherited from code-server, see test/helpers/code-server.ts):
 *   SWARM_EXT_TEST_LOG      file the spec report and a summary line are written to
 *                           (default: extension-host-tests.log next to the bundle)
 *   SWARM_EXT_TEST_GREP     only tests whose full title matches this regular expression
 *   SWARM_EXT_TEST_TIMEOUT  per-test timeout in ms (default 30000)
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { findSourceMap } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';
import Mocha from 'mocha';
import { suites } from 'virtual:extension-host-suites';
import { patience } from '../helpers/patience.ts';

/**
 * Maps `bundle.cjs:line:col` frames back to the .ts sources. The extension host installs its own
 * Error.prepareStackTrace (not configurable), which bypasses Node's source-map support, so the runner maps
 * failure stacks itself with the maps Node parsed (the generated loader enabled them before the bundle loaded).
 */
function mapStack(stack: string): string {
  return stack.replace(/([(\s])(\/[^\s()]+\.c?js):(\d+):(\d+)/g, (whole, pre: string, file: string, line: string, col: string) => {
    try {
      const entry = findSourceMap(file)?.findEntry(Number(line) - 1, Number(col) - 1) as
        | { originalSource?: string; originalLine?: number; originalColumn?: number }
        | undefined;
      if (!entry?.originalSource || entry.originalLine === undefined) return whole;
      const src = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : entry.originalSource;
      return `${pre}${src}:${entry.originalLine + 1}:${(entry.originalColumn ?? 0) + 1}`;
    } catch {
      return whole;
    }
  });
}

export async function run(): Promise<void> {
  const logFile =
    process.env.SWARM_EXT_TEST_LOG || join(typeof __dirname === 'string' ? __dirname : process.cwd(), 'extension-host-tests.log');
  mkdirSync(dirname(logFile), { recursive: true });
  writeFileSync(logFile, '');
  const log = (...args: unknown[]) => appendFileSync(logFile, `${format(...args)}\n`);

  // The spec reporter prints through Base.consoleLog: send it to the log file (and the host's console).
  const Base = Mocha.reporters.Base;
  const consoleLog = Base.consoleLog;
  Base.consoleLog = (...args: unknown[]) => {
    log(...args);
    consoleLog(...args);
  };

  // A hang guard, stretched on a loaded machine as every other limit of the tests.
  const timeout = patience(Number(process.env.SWARM_EXT_TEST_TIMEOUT) || 30_000);
  const mocha = new Mocha({ ui: 'bdd', reporter: 'spec', color: false, timeout });
  Mocha.interfaces.tdd(mocha.suite); // suite/test/setup/teardown globals too
  if (process.env.SWARM_EXT_TEST_GREP) mocha.grep(new RegExp(process.env.SWARM_EXT_TEST_GREP));
  log(`# extension host: node ${process.version}, pid ${process.pid}; ${suites.length} suite file(s)`);

  try {
    for (const { file, load } of suites) {
      mocha.suite.emit('pre-require', globalThis, file, mocha);
      const mod = load();
      mocha.suite.emit('require', mod, file, mocha);
      mocha.suite.emit('post-require', globalThis, file, mocha);
    }
  } catch (e) {
    log(`# failed to load the suites: ${(e as Error)?.stack ?? e}`);
    Base.consoleLog = consoleLog;
    throw e;
  }

  const total = mocha.suite.total();
  if (total === 0) {
    log('# no tests found');
    Base.consoleLog = consoleLog;
    throw new Error('no extension-host tests found');
  }
  const failures = await new Promise<number>((resolve) => {
    try {
      mocha.run(resolve).on('fail', (_test: Mocha.Runnable, err: { stack?: unknown }) => {
        if (err && typeof err.stack === 'string') err.stack = mapStack(err.stack);
      });
    } catch (e) {
      log(`# mocha.run threw: ${(e as Error)?.stack ?? e}`);
      resolve(Math.max(1, total));
    }
  });
  log(`# result: ${total} test(s), ${failures} failed`);
  Base.consoleLog = consoleLog;
  if (failures > 0) throw new Error(`${failures} of ${total} extension-host test(s) failed`);
}

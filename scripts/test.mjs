#!/usr/bin/env node
// README's test run (`npm test` runs it after the typecheck and the build): every test/*.test.ts, N
// files at a time, the slow ones first so that no long file starts last and runs alone at the end (a
// plain `node --test` sorts its files by name, which put the eight code-server suites last). The
// extension is packaged once here for every UI suite (SWARM_UI_VSIX) instead of once per suite.
//   node --import tsx scripts/test.mjs [--concurrency N] [files…]
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { packagedVsix } from '../test/helpers/ui-fixtures.ts';

// Longest wall time first, as scripts/test-times.mjs measured them; the rest keep their names' order.
const SLOW_FIRST = [
  'test/vscode-panel-ui.test.ts',
  'test/vscode-launch.test.ts',
  'test/vscode-detached-runs.test.ts',
  'test/vscode-launched-jobs.test.ts',
  'test/vscode-ui.test.ts',
  'test/scheduler-slurm.test.ts',
  'test/vscode-experiment-ui.test.ts',
  'test/vscode-extension.test.ts',
  'test/vscode-harness.test.ts',
];

const args = process.argv.slice(2);
let concurrency = 4;
const at = args.indexOf('--concurrency');
if (at >= 0) {
  concurrency = Number(args[at + 1]);
  args.splice(at, 2);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    console.error('--concurrency needs a positive whole number');
    process.exit(2);
  }
}
const all = readdirSync('test').filter((f) => f.endsWith('.test.ts')).sort().map((f) => `test/${f}`);
const unknown = args.filter((f) => !all.includes(f));
if (unknown.length) {
  console.error(`not a test file under test/: ${unknown.join(', ')}`);
  process.exit(2);
}
const chosen = args.length ? args : all;
const files = [...SLOW_FIRST.filter((f) => chosen.includes(f)), ...chosen.filter((f) => !SLOW_FIRST.includes(f))];

const scratch = mkdtempSync(join(tmpdir(), 'swarm-test-run-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
process.env.SWARM_UI_VSIX ??= packagedVsix(scratch);

const stream = run({ files, concurrency });
stream.on('test:fail', (data) => {
  if (!data.todo) process.exitCode = 1;
});
stream.compose(spec).pipe(process.stdout);

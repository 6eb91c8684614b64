#!/usr/bin/env node
// README's test run (`npm test` runs it after the typecheck and the build): every test/*.test.ts, N
// files at a time (default 3: CONCURRENCY in scripts/test-files.mjs says why), the slow ones first (a plain `node --test` sorts its files by
// name, which put the eight code-server suites last). The extension is packaged once here for every UI
// suite (SWARM_UI_VSIX) instead of once per suite.
//   node --import tsx scripts/test.mjs [--concurrency N] [files…]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from 'node:test';
import { tap } from 'node:test/reporters';
import { packagedVsix } from '../test/helpers/ui-fixtures.ts';
import { testRun } from './test-files.mjs';

const { concurrency, files } = testRun(process.argv.slice(2));

const scratch = mkdtempSync(join(tmpdir(), 'swarm-test-run-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
process.env.SWARM_UI_VSIX ??= packagedVsix(scratch);

const stream = run({ files, concurrency });
stream.on('test:fail', (data) => {
  if (!data.todo) process.exitCode = 1;
});
// TAP, as `node --test` prints when not on a terminal: what CI reads.
stream.compose(tap).pipe(process.stdout);

#!/usr/bin/env node
// Per-file cost of the test suite: runs each test file as its own `node --test` process, N at a time
// (default as `npm test`'s), under GNU time, and prints wall and CPU (user+sys, children that were
// waited for included) per file, slowest CPU first. CPU is the figure to trust on a shared machine;
// wall includes waiting for the other engineers' processes. Like scripts/test.mjs, it packages the
// extension once for every UI suite (SWARM_UI_VSIX).
//   node --import tsx scripts/test-times.mjs [--concurrency N] [files…]   (default: test/*.test.ts, as many at a time as npm test)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packagedVsix } from '../test/helpers/ui-fixtures.ts';
import { testRun } from './test-files.mjs';

const { concurrency, files } = testRun(process.argv.slice(2));
const scratch = mkdtempSync(join(tmpdir(), 'test-times-'));
process.env.SWARM_UI_VSIX ??= packagedVsix(scratch);

function runOne(file, index) {
  const out = join(scratch, `${index}.time`);
  return new Promise((resolve) => {
    const child = spawn('/usr/bin/time', ['-o', out, '-f', '%e %U %S', process.execPath, '--import', 'tsx', '--test', '--test-reporter=tap', file], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let tap = '';
    child.stdout.on('data', (b) => (tap += b));
    child.on('exit', (code) => {
      const [wall, user, sys] = readFileSync(out, 'utf8').trim().split('\n').pop().split(' ').map(Number);
      if (code !== 0) writeFileSync(join(scratch, `${index}.tap`), `${file}\n${tap}`);
      const count = (what) => Number(new RegExp(`^# ${what} (\\d+)`, 'm').exec(tap)?.[1] ?? NaN);
      resolve({ file, code, wall, cpu: user + sys, tests: count('tests'), fail: count('fail') });
    });
  });
}

const started = Date.now();
const results = [];
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < files.length) {
      const i = next++;
      const r = await runOne(files[i], i);
      results.push(r);
      console.error(`${r.file}: wall ${r.wall.toFixed(1)} s, cpu ${r.cpu.toFixed(1)} s, ${r.tests} tests, ${r.fail} failed`);
    }
  }),
);
if (results.every((r) => r.code === 0)) rmSync(scratch, { recursive: true, force: true });
else console.error(`the TAP output of the files that failed: ${scratch}/*.tap`);
results.sort((a, b) => b.cpu - a.cpu);
const sum = (k) => results.reduce((s, r) => s + r[k], 0);
console.log('| file | wall s | cpu s | tests | failed |\n|---|---:|---:|---:|---:|');
for (const r of results) console.log(`| ${r.file} | ${r.wall.toFixed(1)} | ${r.cpu.toFixed(1)} | ${r.tests} | ${r.fail} |`);
console.log(`| total (${files.length} files) | ${sum('wall').toFixed(0)} | ${sum('cpu').toFixed(0)} | ${sum('tests')} | ${sum('fail')} |`);
console.log(`elapsed ${((Date.now() - started) / 1000).toFixed(0)} s at concurrency ${concurrency}`);
process.exitCode = results.some((r) => r.code !== 0) ? 1 : 0;

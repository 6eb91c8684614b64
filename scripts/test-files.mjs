// The test files a run takes and how many at a time, from `[--concurrency N] [files…]` (shared by
// scripts/test.mjs and scripts/test-times.mjs): the slow files first, so that no long file starts last
// and runs alone at the end; the rest keep their names' order. Bad input: one line, exit 2.
import { readdirSync } from 'node:fs';

// Longest wall time first, as a fresh clone's run of three lanes measured them on a 2-core machine (Nov 2026).
const SLOW_FIRST = [
  'test/vscode-panel-ui.test.ts',
  'test/slurm-walltimes.test.ts',
  'test/vscode-detached-runs.test.ts',
  'test/vscode-launch.test.ts',
  'test/scheduler-slurm.test.ts',
  'test/vscode-experiment-ui.test.ts',
  'test/vscode-launched-jobs.test.ts',
  'test/vscode-ui.test.ts',
  'test/chaos.test.ts',
  'test/detached-runs.test.ts',
  'test/cli-resume.test.ts',
  'test/cli-port.test.ts',
  'test/cli-properties.test.ts',
  'test/cli.test.ts',
  'test/vscode-extension.test.ts',
  'test/vscode-harness.test.ts',
];

/**
 * Files at a time by default: three on this project's 2-core machines, as a third of the suites' time
 * is waiting (on Slurm's walltimes, code-server and simulated latency), not computing: 426–444 s of
 * tests against 568–721 s at two (Nov 2026). The stalls three lanes once showed were the tests' own:
 * a wait whose probe never answered (the 10,000 × 1,000 panel test) and a pool test whose hedges
 * queued behind hung requests (a real bug, fixed in the pool).
 */
export const CONCURRENCY = 3;

export function testRun(argv) {
  const args = [...argv];
  let concurrency = CONCURRENCY;
  const at = args.indexOf('--concurrency');
  if (at >= 0) {
    concurrency = Number(args[at + 1]);
    args.splice(at, 2);
  }
  const all = readdirSync('test').filter((f) => f.endsWith('.test.ts')).sort().map((f) => `test/${f}`);
  const unknown = args.filter((f) => !all.includes(f));
  const problem = !Number.isInteger(concurrency) || concurrency < 1 ? '--concurrency needs a positive whole number' : unknown.length ? `not a test file under test/: ${unknown.join(', ')}` : undefined;
  if (problem) {
    console.error(problem);
    process.exit(2);
  }
  const chosen = args.length ? args : all;
  return { concurrency, files: [...SLOW_FIRST.filter((f) => chosen.includes(f)), ...chosen.filter((f) => !SLOW_FIRST.includes(f))] };
}

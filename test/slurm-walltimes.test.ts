// The one-minute walltime tests, apart from test/scheduler-slurm.test.ts so that a test run can give
// their minute of waiting a lane of its own (scripts/test-files.mjs).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonLines, runCli, writeText } from './helpers/cli.ts';
import { freePorts, slurmUnavailable, TestSlurm, withSlurm } from './helpers/slurm.ts';

// Each waits out Slurm's shortest walltime (one minute): side by side, on a node that says it has the
// CPUs for their five servers, they take one minute instead of three.
describe('walltimes on a real Slurm: three jobs that run out their minute at once', { skip: slurmUnavailable ?? false, concurrency: true }, () => {
  const slurm = new TestSlurm(8);
  let dir = '';
  const env = () => slurm.env;
  withSlurm(slurm, (made) => (dir = made));

  it('--watch warns before the walltime, and sees the job end by it', async () => {
    const r = await runCli(['launch', '--scheduler', 'slurm', '--engine', 'sim', '--walltime', '1', '--watch', '--warn-before', '0.75', '--port-base', String(await freePorts(1)), '--interval', '0.5', '--job-name', 'walltime'], { env: env(), cwd: dir, timeoutMs: 150_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ready: job \d+ \(slurm\), 1\/1 server\(s\) healthy.*walltime left \d+ s$/m);
    assert.match(r.stderr, /^warning: job \d+ reaches its walltime in \d+ s: drain its runs now \(swarm drain --job \d+/m);
    assert.match(r.stderr, /^job \d+ ended: timeout \(TIMEOUT/m);
  });

  it('scatter on the job\'s hostfile with no drain stops at the walltime: what is in flight and unsent is cancelled by walltime (none failed over to dead servers or failed), and says how to resume', async () => {
    const base = await freePorts(2);
    const launch = await runCli(['launch', '--scheduler', 'slurm', '--engine', 'sim', '--servers-per-node', '2', '--port-base', String(base), '--walltime', '1', '--interval', '0.3', '--job-name', 'walltime-stop'], { env: env(), cwd: dir, timeoutMs: 60_000 });
    assert.equal(launch.code, 0, launch.stderr);
    const id = /^ready: job (\d+)/m.exec(launch.stdout)![1]!;
    const prompts = await writeText(dir, 'many-walltime.txt', Array.from({ length: 10_000 }, (_, i) => `prompt ${i + 1}`).join('\n'));
    const out = join(dir, 'walltime.jsonl');
    // 10,000 prompts two at a time outlast the minute the job has.
    const r = await runCli(['scatter', '--hostfile', join(dir, '.swarm', 'jobs', 'walltime-stop', 'hostfile.ready'), '--prompts', prompts, '--no-batch', '--concurrency', '2', '--out', out, '--quiet'], { cwd: dir, timeoutMs: 90_000 });
    assert.equal(r.code, 1, r.stderr);
    const reason = `cancelled by walltime: job ${id} reached its walltime (--resume finishes it on the next job)`;
    assert.ok(r.stderr.split('\n').includes(`${reason}: the requests in flight and the prompts not sent are cancelled`), r.stderr);
    assert.match(r.stderr, new RegExp(`^walltime: [\\d,]+ prompt\\(s\\) cancelled by the walltime; complete them with swarm scatter --resume ${out.replace(/[.]/g, '\\.')} --prompts `, 'm'));
    const rows = jsonLines(await readFile(out, 'utf8'));
    assert.deepEqual(rows.map((row) => row.index), [...Array(10_000).keys()]);
    const ok = rows.filter((row) => row.ok).length;
    const stopped = rows.filter((row) => row.status === 'cancelled' && row.error === reason).length;
    assert.ok(ok > 0 && stopped > 0 && ok + stopped === 10_000, `${ok} ok, ${stopped} cancelled by walltime, ${10_000 - ok - stopped} other: ${JSON.stringify([...new Set(rows.filter((row) => !row.ok).map((row) => row.error))])}`);
  });

  it('swarm load on a job\'s hostfile stops at the walltime as scatter does: cancelled by walltime, and says so', async () => {
    const launch = await runCli(['launch', '--scheduler', 'slurm', '--engine', 'sim', '--servers-per-node', '2', '--port-base', String(await freePorts(2)), '--walltime', '1', '--interval', '0.3', '--job-name', 'load-walltime'], { env: env(), cwd: dir, timeoutMs: 60_000 });
    assert.equal(launch.code, 0, launch.stderr);
    const id = /^ready: job (\d+)/m.exec(launch.stdout)![1]!;
    const out = join(dir, 'load-walltime.jsonl');
    // Ten minutes of load on a job with one minute.
    const r = await runCli(['load', '--hostfile', join(dir, '.swarm', 'jobs', 'load-walltime', 'hostfile.ready'), '--duration', '600', '--input-len', '8', '--output-len', '4', '--concurrency', '2', '--out', out, '--quiet'], { env: env(), cwd: dir, timeoutMs: 120_000 });
    assert.equal(r.code, 1, r.stderr);
    const reason = `cancelled by walltime: job ${id} reached its walltime (--resume finishes it on the next job)`;
    assert.ok(r.stderr.split('\n').includes(`${reason}: the requests in flight and the prompts not sent are cancelled`), r.stderr);
    assert.match(r.stderr, /^walltime: [\d,]+ prompt\(s\) cancelled by the walltime; complete them with swarm load again on the next job's hostfile$/m);
    const rows = jsonLines(await readFile(out, 'utf8'));
    assert.ok(rows.some((row) => row.ok), 'requests answered before the walltime');
    assert.ok(rows.every((row) => row.ok || (row.status === 'cancelled' && row.error === reason)), JSON.stringify([...new Set(rows.filter((row) => !row.ok).map((row) => row.error))]));
  });
});

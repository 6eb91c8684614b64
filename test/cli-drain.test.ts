import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { finished, jsonLines, runCli, spawnCli, suiteSim, waitFor, writeText } from './helpers/cli.ts';

const DRAINED = 'drained: not sent (the run was drained; --resume sends it)';

describe('swarm drain: finish what is in flight, send nothing new, resume later', () => {
  // Slow enough that a run of 400 individual prompts, 4 at a time, is far from done when drained.
  const suite = suiteSim('hostfile', 2, ['--ttft-ms', '60']);

  it('swarm drain --wait drains the scatter of this folder: exit 1, every row written, the unsent ones cancelled as drained; --resume completes the file', async () => {
    const prompts = await writeText(suite.dir, 'prompts.txt', Array.from({ length: 400 }, (_, i) => `prompt ${i + 1}`).join('\n'));
    const out = join(suite.dir, 'out.jsonl');
    const child = spawnCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', prompts, '--no-batch', '--concurrency', '4', '--max-tokens', '4', '--out', out, '--quiet'], { cwd: suite.dir });
    const done = finished(child, 'swarm scatter', 60_000);
    // The run announces itself under .swarm/active once it runs.
    await waitFor(async () => ((await readdir(join(suite.dir, '.swarm', 'active')).catch(() => [] as string[])).includes(`${child.pid}.json`) ? true : undefined), 20_000, 'the run to register');
    const drain = await runCli(['drain', '--wait'], { cwd: suite.dir, timeoutMs: 30_000 });
    assert.equal(drain.code, 0, drain.stderr);
    assert.match(drain.stderr, new RegExp(`^draining run ${child.pid} \\(swarm scatter --hostfile `, 'm'));
    assert.match(drain.stderr, /^drained: the run has ended$/m);
    const r = await done;
    assert.equal(r.code, 1, 'a drained run misses results: never exit 0');
    assert.match(r.stderr, /^draining \(SIGUSR2, swarm drain\): the requests in flight finish, nothing new is sent/m);
    assert.match(r.stderr, new RegExp(`^drained: \\d+ prompt\\(s\\) not sent; complete them with swarm scatter --resume ${out.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} --prompts `, 'm'));
    const rows = jsonLines(await readFile(out, 'utf8'));
    assert.equal(rows.length, 400);
    assert.deepEqual(rows.map((row) => row.index), [...Array(400).keys()]);
    const ok = rows.filter((row) => row.ok);
    const drained = rows.filter((row) => row.status === 'cancelled');
    assert.ok(ok.length > 0 && drained.length > 0, `${ok.length} ok, ${drained.length} drained`);
    assert.equal(ok.length + drained.length, 400, 'nothing failed: what was in flight finished');
    assert.ok(drained.every((row) => row.error === DRAINED && row.endpoint === null));
    assert.ok(!existsSync(join(suite.dir, '.swarm', 'active', `${child.pid}.json`)), 'the run unregistered');

    const resumed = await runCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', prompts, '--no-batch', '--max-tokens', '4', '--resume', out, '--quiet'], { cwd: suite.dir, timeoutMs: 60_000 });
    assert.equal(resumed.code, 0, resumed.stderr);
    const all = jsonLines(await readFile(out, 'utf8'));
    assert.equal(all.length, 400);
    assert.ok(all.every((row, i) => row.ok && row.prompt === `prompt ${i + 1}`));
  });

  it('a stale or forged entry is never signalled: a live process that is not swarm, a garbage file; both are removed', async () => {
    const active = join(suite.dir, '.swarm', 'active');
    await mkdir(active, { recursive: true });
    // SIGUSR2 would end `sleep`: it must live on.
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await writeFile(join(active, `${other.pid}.json`), JSON.stringify({ pid: other.pid, argv: ['scatter'], startedAt: new Date().toISOString() }));
      await writeFile(join(active, '4194999.json'), '\u0000garbage{');
      const r = await runCli(['drain'], { cwd: suite.dir });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, 'no run is going on from this folder: nothing to drain\n');
      assert.equal(other.exitCode, null);
      assert.equal(other.signalCode, null, 'the other process got no signal');
      assert.deepEqual(await readdir(active), []);
    } finally {
      other.kill();
    }
  });

  it('nothing going: says so, exit 0; an unknown job and --drain-before off a launched job are bad input', async () => {
    const none = await runCli(['drain'], { cwd: suite.dir });
    assert.equal(none.code, 0);
    assert.equal(none.stderr, 'no run is going on from this folder: nothing to drain\n');
    const job = await runCli(['drain', '--job', '4242'], { cwd: suite.dir });
    assert.equal(job.code, 2);
    assert.match(job.stderr, /^job 4242 was not launched from this folder/);
    const prompts = await writeText(suite.dir, 'two.txt', 'a\nb');
    const before = await runCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', prompts, '--drain-before', '5'], { cwd: suite.dir });
    assert.equal(before.code, 2);
    assert.equal(before.stderr.trim().split('\n').length, 1, before.stderr);
    assert.match(before.stderr, /^--drain-before: .*hostfile is not the hostfile of a running job swarm launch started here/);
  });
});

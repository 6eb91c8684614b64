import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ownerOf, shardEndpoints, shardFileOf, shardPrompts } from '../src/core/index.ts';
import { BIN, ensureBuilt, finished, jsonLines, killAll, runCli, startSim, suiteSim, tempDir, waitFor, writeText, type Sim } from './helpers/cli.ts';
import { slurmUnavailable, TestSlurm } from './helpers/slurm.ts';

const prompts = (n: number) => Array.from({ length: n }, (_, i) => `item ${i}`).join('\n');

/**
 * The merged file: one row per prompt, in input order, each answered by the endpoint round-robin
 * gives it — or, with `shards`, by one of its shard's endpoints (a resumed shard sends its rest round-robin over its own block).
 */
function assertMerged(text: string, n: number, endpoints: readonly string[], shards?: number): void {
  const rows = jsonLines(text);
  assert.equal(rows.length, n);
  rows.forEach((r, i) => {
    assert.equal(r.index, i);
    assert.equal(r.prompt, `item ${i}`);
    assert.equal(r.status, 'ok', `row ${i}: ${r.error}`);
    if (shards === undefined) assert.equal(r.endpoint, endpoints[i % endpoints.length]);
    else assert.equal(ownerOf(endpoints.indexOf(r.endpoint), shards, endpoints.length), ownerOf(i % endpoints.length, shards, endpoints.length), `row ${i} answered by ${r.endpoint}`);
  });
}

describe('shards: the slicing', () => {
  it('every prompt belongs to exactly one shard, the one owning its endpoint, in input order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 40 }), (n, prompts, s) => {
        const shards = Math.min(s, n);
        const seen = new Array<number>(prompts).fill(0);
        for (let rank = 0; rank < shards; rank++) {
          const [start, end] = shardEndpoints({ rank, shards }, n);
          assert.ok(end > start, 'each shard has an endpoint');
          for (let j = start; j < end; j++) assert.equal(ownerOf(j, shards, n), rank);
          const owned = shardPrompts({ rank, shards }, prompts, n);
          owned.forEach((i, k) => {
            seen[i]!++;
            assert.ok(k === 0 || i > owned[k - 1]!);
            assert.ok(i % n >= start && i % n < end);
          });
        }
        assert.ok(seen.every((c) => c === 1));
      }),
    );
    assert.equal(shardFileOf('/x/res.jsonl', { rank: 2, shards: 4 }), '/x/res.shard-2-of-4.jsonl');
    assert.equal(shardFileOf('out', { rank: 0, shards: 1 }), 'out.shard-0-of-1');
  });
});

describe('shards by hand and swarm merge', () => {
  const suite = suiteSim('hosts', 5);

  it('three shards (ranks from --shard, PMI_RANK and OMPI_COMM_WORLD_RANK) merge in input order; a missing or foreign shard is refused (exit 2), --incomplete merges what there is (exit 1)', async () => {
    const p = await writeText(suite.dir, 'p.txt', prompts(103));
    const out = join(suite.dir, 'res.jsonl');
    const shard = (env: Record<string, string>, extra: string[] = []) => runCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', p, '--out', out, '--shards', '3', '--quiet', ...extra], { env });
    const [a, b, c] = await Promise.all([shard({}, ['--shard', '0']), shard({ PMI_RANK: '1' }), shard({ OMPI_COMM_WORLD_RANK: '2' })]);
    for (const r of [a, b, c]) assert.equal(r!.code, 0, r!.stderr);
    assert.deepEqual(readdirSync(suite.dir).filter((f) => /^res\.shard-\d-of-3\.jsonl$/.test(f)).sort(), ['res.shard-0-of-3.jsonl', 'res.shard-1-of-3.jsonl', 'res.shard-2-of-3.jsonl']);

    // Shard 1 alone is not the run.
    const missing = await runCli(['merge', '--out', join(suite.dir, 'm1.jsonl'), join(suite.dir, 'res.shard-0-of-3.jsonl'), join(suite.dir, 'res.shard-2-of-3.jsonl')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^merge: shard\(s\) 1 of 3 not given$/m);
    assert.ok(!existsSync(join(suite.dir, 'm1.jsonl')));
    const partial = await runCli(['merge', '--incomplete', '--out', join(suite.dir, 'm1.jsonl'), join(suite.dir, 'res.shard-0-of-3.jsonl'), join(suite.dir, 'res.shard-2-of-3.jsonl')]);
    assert.equal(partial.code, 1, partial.stderr);
    assert.match(partial.stderr, /prompts have no row/);

    // A shard of other prompts is another run's.
    const q = await writeText(suite.dir, 'q.txt', prompts(103).replace('item 7', 'item seven'));
    const other = await runCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', q, '--out', join(suite.dir, 'other.jsonl'), '--shards', '3', '--shard', '1', '--quiet']);
    assert.equal(other.code, 0, other.stderr);
    const foreign = await runCli(['merge', '--out', join(suite.dir, 'm2.jsonl'), join(suite.dir, 'res.shard-0-of-3.jsonl'), join(suite.dir, 'other.shard-1-of-3.jsonl'), join(suite.dir, 'res.shard-2-of-3.jsonl')]);
    assert.equal(foreign.code, 2);
    assert.match(foreign.stderr, /other\.shard-1-of-3\.jsonl is shard 1 of another run/);

    // By default merge finds the shards beside --out.
    const merged = await runCli(['merge', '--out', out]);
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(merged.stderr, /^merged 3 shard\(s\): 103 rows in input order to /m);
    assertMerged(await readFile(out, 'utf8'), 103, suite.sim.endpoints);
    // What answered each shard, together beside the merged file.
    const servers = JSON.parse(await readFile(`${out}.servers.json`, 'utf8')) as Array<{ endpoint: string }>;
    assert.deepEqual(servers.map((s) => s.endpoint).sort(), [...suite.sim.endpoints].sort());
  });

  it('detached with --shards and no rank: the run starts its shards as processes here and attach ends with one merged file; shards that all refuse their input end it at once (exit 2)', async () => {
    const p = await writeText(suite.dir, 'pd.txt', prompts(103));
    const env = { SWARM_RUNS_DIR: join(suite.dir, 'runs') };
    // Each shard is a node process of its own: on a loaded machine, starting them takes a while.
    const started = await runCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', p, '--shards', '2', '--detach'], { env, timeoutMs: 90_000 });
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    const attached = await runCli(['attach', id, '--out', join(suite.dir, 'detached.jsonl')], { env, timeoutMs: 60_000 });
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(readFileSync(join(suite.dir, 'runs', id, 'log.txt'), 'utf8'), /^shards 0, 1 of 2 started \(local\)$/m);
    assertMerged(await readFile(join(suite.dir, 'detached.jsonl'), 'utf8'), 103, suite.sim.endpoints, 2);

    const bad = await runCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', p, '--shards', '6', '--detach'], { env, timeoutMs: 90_000 });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /6 shards but 5 endpoint\(s\)/);
    assert.match(bad.stderr, /ended at once \(exit 2\)/);
  });

  it('a detached sharded run drained mid-way: each shard\'s log line names swarm resume RUN (not the shard\'s own file), and swarm resume completes the merge', async () => {
    const slow = await startSim(suite.dir, 'slow-hosts', 2, ['--tpot-ms', '40']);
    const p = await writeText(suite.dir, 'pdrain.txt', prompts(120));
    const env = { SWARM_RUNS_DIR: join(suite.dir, 'runs') };
    const started = await runCli(['scatter', '--hostfile', slow.hostfile, '--prompts', p, '--shards', '2', '--no-batch', '--concurrency', '1', '--detach'], { env, cwd: suite.dir, timeoutMs: 90_000 });
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    const log = () => readFileSync(join(suite.dir, 'runs', id, 'log.txt'), 'utf8');
    const rowsOf = (rank: number) => {
      const partial = `${shardFileOf(join(suite.dir, 'runs', id, 'results.jsonl'), { rank, shards: 2 })}.partial`;
      return existsSync(partial) ? readFileSync(partial, 'utf8').split('\n').filter(Boolean).length : 0;
    };
    await waitFor(() => (rowsOf(0) > 2 && rowsOf(1) > 2 ? true : undefined), 120_000, 'both shards\' first rows');
    const drain = await runCli(['drain', '--wait'], { cwd: suite.dir, timeoutMs: 60_000 });
    assert.equal(drain.code, 0, drain.stderr);
    const stopped = await runCli(['attach', id], { env, timeoutMs: 60_000 });
    assert.equal(stopped.code, 1, stopped.stderr);
    const drained = log().split('\n').filter((l) => l.startsWith('drained: '));
    assert.equal(drained.length, 2, log());
    for (const line of drained) assert.match(line, new RegExp(`complete them with swarm resume ${id} --hostfile <the next swarm's>$`));
    assert.doesNotMatch(log(), /swarm scatter --resume/);

    const resumed = await runCli(['resume', id], { env, timeoutMs: 90_000 });
    assert.equal(resumed.code, 0, resumed.stderr);
    const attached = await runCli(['attach', id, '--out', join(suite.dir, 'drained.jsonl')], { env, timeoutMs: 120_000 });
    assert.equal(attached.code, 0, attached.stderr);
    assertMerged(await readFile(join(suite.dir, 'drained.jsonl'), 'utf8'), 120, slow.endpoints, 2);
  });

  it('shard flags that cannot work are bad input', async () => {
    const p = await writeText(suite.dir, 'p2.txt', prompts(4));
    const out = join(suite.dir, 'bad.jsonl');
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--shards', '2'], {}, /no shard rank: give --shard R, or start the shards with srun -n 2/],
      [['--shards', '6', '--shard', '0'], {}, /6 shards but 5 endpoint\(s\)/],
      [['--shards', '2', '--shard', '2'], {}, /ranks run from 0 to 1/],
      [['--shards', '2'], { SLURM_PROCID: 'x1' }, /SLURM_PROCID="x1" is not a rank/],
      [['--shards', '2', '--shard', '0', '--sample', '2'], {}, /drop --slice and --sample/],
    ];
    for (const [flags, env, message] of cases) {
      const r = await runCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', p, '--out', out, ...flags], { env });
      assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
  });
});

describe('shards under a real Slurm (srun -n 4 on loopback)', { skip: slurmUnavailable ?? false }, () => {
  const slurm = new TestSlurm();
  let dir = '';
  let cleanup: () => Promise<void>;
  let sim: Sim;

  before(async () => {
    ensureBuilt();
    await slurm.start();
    ({ dir, cleanup } = await tempDir());
    // Slow enough that a shard is still sending when it is killed.
    sim = await startSim(dir, 'hosts', 8, ['--ttft-ms', '40']);
  });
  after(async () => {
    await killAll();
    await sim.stop();
    await slurm.stop();
    await cleanup();
  });

  /** `srun -n N swarm scatter …` (the shards take their ranks from SLURM_PROCID). */
  const srun = (tasks: number, args: string[]) => {
    const child = spawn('srun', ['-n', String(tasks), '--overcommit', '--chdir', dir, process.execPath, BIN, 'scatter', '--hostfile', sim.hostfile, '--quiet', ...args], { env: { ...process.env, ...slurm.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    return finished(child, `srun -n ${tasks}`, 180_000);
  };

  it('4 shards merged in input order; a shard killed mid-run is resumed alone and the merge is whole', async () => {
    const n = 640;
    const p = await writeText(dir, 'p.txt', prompts(n));
    const out = join(dir, 'run.jsonl');
    const job = srun(4, ['--prompts', p, '--out', out, '--shards', '4', '--no-batch', '--concurrency', '2']);
    // Shard 2 is killed (SIGKILL: nothing of its own runs after) once some of its rows are on disk.
    const partial = `${shardFileOf(out, { rank: 2, shards: 4 })}.partial`;
    await waitFor(() => (existsSync(partial) && readFileSync(partial, 'utf8').split('\n').length > 10 ? true : undefined), 120_000, "shard 2's first rows");
    const victim = shardProcess(out, 2);
    process.kill(victim, 'SIGKILL');
    const ran = await job;
    assert.notEqual(ran.code, 0, 'srun reports the killed task');
    const kept = readFileSync(partial, 'utf8').split('\n').filter(Boolean).length;
    assert.ok(kept > 0 && kept < n / 4, `${kept} rows of shard 2 kept`);
    for (const rank of [0, 1, 3]) assert.ok(existsSync(shardFileOf(out, { rank, shards: 4 })), `shard ${rank} finished`);

    const refused = await runCli(['merge', '--out', out]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^merge: shard 2 of 4 is unfinished: its rows so far are in .*run\.shard-2-of-4\.jsonl\.partial \(resume that shard alone/m);

    // Shard 2 alone, resumed: it sends only what it lacks.
    const resumed = await srun(1, ['--prompts', p, '--resume', out, '--shards', '4', '--shard', '2', '--no-batch', '--concurrency', '2']);
    assert.equal(resumed.code, 0, resumed.stderr);
    const merged = await runCli(['merge', '--out', out]);
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(merged.stderr, new RegExp(`^merged 4 shard\\(s\\): ${n} rows in input order`, 'm'));
    const rows = await readFile(out, 'utf8');
    assertMerged(rows, n, sim.endpoints, 4);
    // Only the killed shard's rows were sent again: the other shards' rows are exactly round-robin's.
    const moved = jsonLines(rows).filter((r, i) => r.endpoint !== sim.endpoints[i % 8]);
    assert.ok(moved.every((r) => ownerOf(r.index % 8, 4, 8) === 2));
  });

  it('scatter --detach --shards 4 (srun): a shard killed mid-run leaves the run unmerged (exit 1, naming swarm resume); swarm resume runs that shard alone and attach ends with one file in input order', async () => {
    const n = 640;
    const p = await writeText(dir, 'detached.txt', prompts(n));
    const env = { ...slurm.env, SWARM_RUNS_DIR: join(dir, 'runs') };
    const started = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', p, '--shards', '4', '--shard-launcher', 'srun', '--no-batch', '--concurrency', '2', '--detach'], { env, timeoutMs: 120_000 });
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    const out = join(dir, 'runs', id, 'results.jsonl');
    const partial = `${shardFileOf(out, { rank: 2, shards: 4 })}.partial`;
    await waitFor(() => (existsSync(partial) && readFileSync(partial, 'utf8').split('\n').length > 10 ? true : undefined), 120_000, "shard 2's first rows");
    process.kill(shardProcess(out, 2), 'SIGKILL');

    const dead = await runCli(['attach', id], { env, timeoutMs: 180_000 });
    assert.equal(dead.code, 1, dead.stderr);
    assert.match(dead.stderr, new RegExp(`shard 2 of 4 is unfinished.*swarm resume ${id} runs the unfinished shards alone and merges`));
    assert.ok(!existsSync(out));
    for (const rank of [0, 1, 3]) assert.ok(existsSync(shardFileOf(out, { rank, shards: 4 })), `shard ${rank} finished`);

    const resumed = await runCli(['resume', id], { env, timeoutMs: 120_000 });
    assert.equal(resumed.code, 0, resumed.stderr);
    const attached = await runCli(['attach', id, '--out', join(dir, 'copy.jsonl')], { env, timeoutMs: 180_000 });
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stderr, new RegExp(`finished \\(exit 0\\)\\s+${n}/${n} · 0 failed`));
    // Shard 2 alone, by srun -n 1 with its rank given.
    assert.match(readFileSync(join(dir, 'runs', id, 'log.txt'), 'utf8'), /^shards 2 of 4 started \(srun\)$/m);
    const rows = await readFile(join(dir, 'copy.jsonl'), 'utf8');
    assertMerged(rows, n, sim.endpoints, 4);
    const moved = jsonLines(rows).filter((r, i) => r.endpoint !== sim.endpoints[i % 8]);
    assert.ok(moved.every((r) => ownerOf(r.index % 8, 4, 8) === 2));
  });
});

/** The pid of the shard of rank `rank` writing `out` (a node process whose environment says SLURM_PROCID=rank). */
function shardProcess(out: string, rank: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!argv.includes(out) || !argv.includes('--shards')) continue;
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`SLURM_PROCID=${rank}`)) return Number(entry);
    } catch {
      // gone, or not ours to read
    }
  }
  throw new Error(`no shard ${rank} process writing ${out}`);
}

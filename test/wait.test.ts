import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { closedPort, ensureBuilt, finished, killAll, runCli, spawnCli, startSim, tempDir, waitFor, type Sim } from './helpers/cli.ts';
import { patience } from './helpers/patience.ts';

describe('swarm wait', () => {
  let dir = '';
  let cleanup: () => Promise<void>;
  const sims: Sim[] = [];
  before(async () => {
    ensureBuilt();
    ({ dir, cleanup } = await tempDir());
  });
  after(async () => {
    await Promise.all(sims.map((s) => s.stop()));
    await killAll();
    await cleanup();
  });
  const sim = async (name: string, n: number, flags: string[] = []) => {
    const s = await startSim(dir, name, n, flags);
    sims.push(s);
    return s;
  };

  it('waits for booting servers and writes the hostfile of the healthy ones, tags sorted', async () => {
    const up = await sim('up', 1);
    // Long enough that the first round finds them still booting even when a loaded machine starts the CLI
    // late: 6 s on an idle machine, stretched by the load (patience).
    const bootMs = patience(6_000);
    const booting = await sim('booting', 2, ['--boot-ms', String(bootMs)]);
    const hostfile = join(dir, 'job.hostfile');
    const lines = [...up.lines, ...booting.lines].map((l, i) => `${l}\trole=chat\tidx=${i}`);
    await writeFile(hostfile, `${lines.join('\n')}\n`);
    // The wait's own limit outlasts the stretched boot by far (CI's run once booted them in 27 s against a fixed 30 s limit).
    const healthS = Math.ceil((5 * bootMs) / 1000);
    const r = await runCli(['wait', '--hostfile', hostfile, '--interval', '0.2', '--health-timeout', String(healthS), '--hostfile-settle', '0'], { timeoutMs: healthS * 1000 + 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^1\/3 healthy$/m, 'the first round saw only the server already up');
    const ready = (await readFile(`${hostfile}.ready`, 'utf8')).trim().split('\n');
    assert.deepEqual(ready, [...up.lines, ...booting.lines].map((l, i) => `${l}\tidx=${i}\trole=chat`));
  });

  it('gives up on the rest --health-timeout after the first is healthy; --min-fraction / --min-hosts decide the exit', async () => {
    const up = await sim('up2', 1);
    const hostfile = join(dir, 'partial.hostfile');
    const closed = await closedPort();
    await writeFile(hostfile, `${up.lines[0]}\n127.0.0.1\t${closed}\n`);
    const args = ['wait', '--hostfile', hostfile, '--interval', '0.1', '--health-timeout', '0.3', '--hostfile-settle', '0', '--output', join(dir, 'out.hostfile')];
    const strict = await runCli([...args, '--min-fraction', '1']);
    assert.equal(strict.code, 1, strict.stderr);
    assert.match(strict.stderr, new RegExp(`^1 stayed down:\n  127\\.0\\.0\\.1:${closed} \\(down: .*ECONNREFUSED`, 'm'), 'the host that stayed down, named');
    assert.deepEqual((await readFile(join(dir, 'out.hostfile'), 'utf8')).trim().split('\n'), up.lines, 'written even when short');
    const lenient = await runCli([...args, '--min-hosts', '1']);
    assert.equal(lenient.code, 0, lenient.stderr);
  });

  it('waits for the hostfile itself to appear (the PBS job writes it late)', async () => {
    const up = await sim('up3', 1);
    const hostfile = join(dir, 'late.hostfile');
    setTimeout(() => void writeFile(hostfile, `${up.lines[0]}\n`), 700);
    const r = await runCli(['wait', '--hostfile', hostfile, '--hostfile-timeout', '10', '--interval', '0.1', '--hostfile-settle', '0']);
    assert.equal(r.code, 0, r.stderr);
    const missing = await runCli(['wait', '--hostfile', join(dir, 'never'), '--hostfile-timeout', '0.2']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /did not appear within 0\.2 s/);
  });

  it('reads a hostfile its job is still writing, every round, until it ends in a newline and stops changing; a half-written line is not an endpoint', async () => {
    const four = await sim('four', 4);
    const hostfile = join(dir, 'growing.hostfile');
    await writeFile(hostfile, `${four.lines[0]}\n`);
    // Settling takes longer than the wait takes to see a line and this test to append the next (2 s idle,
    // stretched by the load): the file is final only after the last one.
    const settle = (patience(2_000) / 1000).toFixed(1);
    const child = spawnCli(['wait', '--hostfile', hostfile, '--interval', '0.05', '--hostfile-settle', settle, '--health-timeout', '30']);
    const done = finished(child, 'wait', 30_000);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    // The job writes a line whenever the wait has seen the last one; the third arrives in two pieces, cut inside its port.
    const [host, port] = four.lines[2]!.split('\t') as [string, string];
    const steps: Array<[seen: number, piece: string]> = [[1, `${four.lines[1]}\n`], [2, `${host}\t${port.slice(0, 2)}`], [2, `${port.slice(2)}\n`], [3, `${four.lines[3]}\n`]];
    // Each step waits for two rounds after the last piece: the first may have read the file just before it was appended.
    let read = 0; // progress lines already accounted for
    for (const [seen, piece] of steps) {
      await waitFor(
        () => {
          const rounds = stderr.split('\n').filter((l) => / healthy/.test(l));
          const fresh = rounds.slice(read).filter((l) => l === `${seen}/${seen} healthy (${hostfile} still being written)`);
          if (fresh.length < 2) return undefined;
          read = rounds.length;
          return true;
        },
        15_000,
        `a round at ${seen} endpoints`,
      );
      await appendFile(hostfile, piece);
    }
    const r = await done;
    assert.equal(r.code, 0, stderr);
    assert.match(stderr, /^4\/4 healthy; wrote /m);
    assert.doesNotMatch(stderr, new RegExp(`127\\.0\\.0\\.1:${port.slice(0, 2)}\\b`), 'the port cut short was never dialled');
    assert.deepEqual((await readFile(`${hostfile}.ready`, 'utf8')).trim().split('\n'), four.lines);
  });

  it('servers that refuse our credentials (401) stop the wait at once: exit 2, one line saying what to set', async () => {
    const keyed = await startSim(dir, 'keyed', 1, [], { VLLM_API_KEY: 'the-key' });
    sims.push(keyed);
    const r = await runCli(['wait', '--hostfile', keyed.hostfile, '--interval', '0.05', '--hostfile-settle', '0', '--output', join(dir, 'keyed.ready')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^127\.0\.0\.1:\d+ refused our credentials \(HTTP 401\): .*set SWARM_API_KEY to the key the servers were started with/m);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    const withKey = await runCli(['wait', '--hostfile', keyed.hostfile, '--interval', '0.05', '--hostfile-settle', '0', '--output', join(dir, 'keyed.ready')], { env: { SWARM_API_KEY: 'the-key' } });
    assert.equal(withKey.code, 0, withKey.stderr);
  });
});

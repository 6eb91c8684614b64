import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { closedPort, ensureBuilt, killAll, runCli, startSim, tempDir, type Sim } from './helpers/cli.ts';

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
    const booting = await sim('booting', 2, ['--boot-ms', '1500']);
    const hostfile = join(dir, 'job.hostfile');
    const lines = [...up.lines, ...booting.lines].map((l, i) => `${l}\trole=chat\tidx=${i}`);
    await writeFile(hostfile, `${lines.join('\n')}\n`);
    const r = await runCli(['wait', '--hostfile', hostfile, '--interval', '0.2', '--health-timeout', '30'], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^1\/3 healthy$/m, 'the first round saw only the server already up');
    const ready = (await readFile(`${hostfile}.ready`, 'utf8')).trim().split('\n');
    assert.deepEqual(ready, [...up.lines, ...booting.lines].map((l, i) => `${l}\tidx=${i}\trole=chat`));
  });

  it('gives up on the rest --health-timeout after the first is healthy; --min-fraction / --min-hosts decide the exit', async () => {
    const up = await sim('up2', 1);
    const hostfile = join(dir, 'partial.hostfile');
    await writeFile(hostfile, `${up.lines[0]}\n127.0.0.1\t${await closedPort()}\n`);
    const args = ['wait', '--hostfile', hostfile, '--interval', '0.1', '--health-timeout', '0.3', '--output', join(dir, 'out.hostfile')];
    const strict = await runCli([...args, '--min-fraction', '1']);
    assert.equal(strict.code, 1, strict.stderr);
    assert.deepEqual((await readFile(join(dir, 'out.hostfile'), 'utf8')).trim().split('\n'), up.lines, 'written even when short');
    const lenient = await runCli([...args, '--min-hosts', '1']);
    assert.equal(lenient.code, 0, lenient.stderr);
  });

  it('waits for the hostfile itself to appear (the PBS job writes it late)', async () => {
    const up = await sim('up3', 1);
    const hostfile = join(dir, 'late.hostfile');
    setTimeout(() => void writeFile(hostfile, `${up.lines[0]}\n`), 700);
    const r = await runCli(['wait', '--hostfile', hostfile, '--hostfile-timeout', '10', '--interval', '0.1']);
    assert.equal(r.code, 0, r.stderr);
    const missing = await runCli(['wait', '--hostfile', join(dir, 'never'), '--hostfile-timeout', '0.2']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /did not appear within 0\.2 s/);
  });
});

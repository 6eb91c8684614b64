import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, finished, jsonLines, killAll, runCli, spawnCli, startSim, tempDir, waitFor, writeText, type Sim } from './helpers/cli.ts';
import { haveSshd, masters, TestSshd } from './helpers/sshd.ts';


/** Live (non-zombie) processes whose command line mentions `needle`. */
function processesWith(needle: string): string[] {
  return execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(needle) && !l.trim().startsWith('Z') && !l.includes('ps -eo'));
}

/** Sequences a simulator is running now, from its own `/metrics` (`host:port`). */
async function running(endpoint: string): Promise<number> {
  const text = await (await fetch(`http://${endpoint}/metrics`)).text();
  return [...text.matchAll(/^vllm:num_requests_running\{[^}]*\} (\S+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

describe('swarm tunnel and --via', { skip: haveSshd ? false : 'openssh-server is not installed (scripts/install-test-deps.sh)' }, () => {
  const sshd = new TestSshd();
  let dir = '';
  let cleanup: () => Promise<void>;
  let sim: Sim;
  const ssh = () => ['--via', sshd.via, '--ssh-config', sshd.clientConfig];

  before(async () => {
    ensureBuilt();
    await sshd.start();
    ({ dir, cleanup } = await tempDir());
    sim = await startSim(dir, 'sim.hostfile', 3);
  });
  after(async () => {
    await sim.stop();
    await killAll();
    await sshd.stop();
    await cleanup();
  });

  it('opens the forwards, writes a local hostfile, prints ready, and tears everything down on SIGINT', async () => {
    const out = join(dir, 'local.hostfile');
    const before = sshd.logins();
    const child = spawnCli(['tunnel', '--hostfile', sim.hostfile, ...ssh(), '--forward', '--out', out]);
    const done = finished(child, 'swarm tunnel', 30_000);
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    const ready = await waitFor(() => stdout.split('\n').find((l) => l.startsWith('ready')), 15_000, 'the ready line');
    assert.match(ready, /^ready: 3 endpoint\(s\) through .* \(forward: local hostfile .*\); 3 healthy$/);
    const local = (await readFile(out, 'utf8')).trim().split('\n');
    assert.equal(local.length, 3);
    const localPorts = local.map((l) => Number(l.split('\t')[1]));
    assert.ok(localPorts.every((p, i) => p !== Number(sim.lines[i]!.split('\t')[1])));

    // Another tool uses the local hostfile; requests land on the real servers.
    const scatter = await runCli(['scatter', '--hostfile', out, '--prompts', await writeText(dir, 'p.txt', 'a\nb\nc\n'), '--quiet']);
    assert.equal(scatter.code, 0, scatter.stderr);
    assert.deepEqual(jsonLines(scatter.stdout).map((r) => r.text), ['completion: a', 'completion: b', 'completion: c']);
    assert.ok(processesWith(`-p ${sshd.port} `).length > 0, 'an ssh master runs while the tunnel is up');

    child.kill('SIGINT');
    const result = await done;
    assert.equal(result.code, 130, result.stderr);
    assert.match(result.stderr, /tunnel closed/);
    assert.equal(sshd.logins() - before, 1);
    // Any ssh of this file's login (the master, an `-O forward`, a check) names its port; other files'
    // tunnels, running beside this one, have `-O forward`s of their own.
    assert.deepEqual(processesWith(`-p ${sshd.port} `), [], 'no ssh process left');
    const listening = execFileSync('ss', ['-Hltn'], { encoding: 'utf8' });
    for (const p of localPorts) assert.ok(!listening.includes(`127.0.0.1:${p} `), `port ${p} closed`);
  });

  it('scatter --via reads a remote hostfile over one login; results name the compute nodes', async () => {
    const before = sshd.logins();
    const r = await runCli(['scatter', '--remote-hostfile', sim.hostfile, ...ssh(), '--tunnel-mode', 'socks', '--prompts', await writeText(dir, 'q.txt', 'x\ny\nz\nw\n')]);
    assert.equal(r.code, 0, r.stderr);
    const results = jsonLines(r.stdout);
    assert.deepEqual(results.map((x) => x.text), ['completion: x', 'completion: y', 'completion: z', 'completion: w']);
    assert.deepEqual(results.map((x) => x.endpoint), [0, 1, 2, 0].map((i) => sim.endpoints[i]));
    assert.match(r.stderr, /tunnel: 3 endpoint\(s\) through .* \(socks 127\.0\.0\.1:\d+\)/);
    assert.equal(sshd.logins() - before, 1);
  });

  it('health --via reports each endpoint by its real name', async () => {
    const r = await runCli(['health', '--hostfile', sim.hostfile, ...ssh(), '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(jsonLines(r.stdout).map((x) => [x.endpoint, x.status]), sim.endpoints.map((e) => [e, 'up']));
  });

  it('a bad local hostfile is bad input before any login: no one-time password spent on it', async () => {
    const before = sshd.logins();
    const bad = await writeText(dir, 'bad.hostfile', 'node-a\t99999\n');
    const prompts = await writeText(dir, 'bad-run.txt', 'x\n');
    for (const args of [['scatter', '--prompts', prompts], ['health'], ['tunnel']]) {
      const r = await runCli([...args, '--hostfile', bad, ...ssh()]);
      assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
      assert.match(r.stderr, /bad\.hostfile:1: port "99999"/);
    }
    const missing = await runCli(['scatter', '--prompts', join(dir, 'no-such.txt'), '--hostfile', sim.hostfile, ...ssh()]);
    assert.equal(missing.code, 2, missing.stderr);
    const out = await runCli(['scatter', '--prompts', prompts, '--hostfile', sim.hostfile, '--out', join(dir, 'no', 'such', 'dir.jsonl'), ...ssh()]);
    assert.equal(out.code, 2, out.stderr);
    assert.equal(sshd.logins() - before, 0, 'no login');
  });

  it('swarm tunnel: kill -9 of the master is healed on the same ports with one new login; the master holds no secret', { skip: process.platform === 'linux' ? false : '/proc only on Linux' }, async () => {
    const out = join(dir, 'heal.hostfile');
    const before = sshd.logins();
    const child = spawnCli(['tunnel', '--hostfile', sim.hostfile, ...ssh(), '--forward', '--out', out], { env: { SWARM_API_KEY: 'swarm-secret-1234', VLLM_API_KEY: 'vllm-secret-5678' } });
    const done = finished(child, 'swarm tunnel', 60_000);
    let stderr = '';
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    await waitFor(() => (stdout.includes('ready') ? true : undefined), 15_000, 'ready');
    const [master] = masters(sshd.port);
    assert.ok(master);
    assert.doesNotMatch(await readFile(`/proc/${master}/environ`, 'utf8'), /secret|API_KEY/);

    process.kill(master, 'SIGKILL');
    await waitFor(() => (/reconnected/.test(stderr) ? true : undefined), 30_000, 'reconnected');
    assert.equal(sshd.logins() - before, 2, 'the first login and one to heal');
    assert.equal(masters(sshd.port).length, 1, 'one master: no plain session beside a stale socket');
    const again = await runCli(['scatter', '--hostfile', out, '--prompts', await writeText(dir, 'heal.txt', 'a\nb\nc\n'), '--quiet']);
    assert.equal(again.code, 0, again.stderr);

    child.kill('SIGTERM');
    const result = await done;
    assert.equal(result.code, 143, stderr);
    assert.deepEqual(processesWith(`-p ${sshd.port} `), [], 'no ssh process left');
  });

  it('Ctrl-C while health or wait waits on a silent endpoint: exit 130 and no ssh process left', async () => {
    const silent = createServer(() => {}); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const hostfile = await writeText(dir, 'silent.hostfile', `127.0.0.1\t${(silent.address() as AddressInfo).port}\n`);
      for (const args of [['health', '--timeout', '30'], ['wait', '--output', join(dir, 'silent.ready')]]) {
        let stderr = '';
        const child = spawnCli([...args, '--hostfile', hostfile, ...ssh()]);
        child.stderr!.on('data', (d: Buffer) => (stderr += d));
        const done = finished(child, args[0]!, 30_000);
        await waitFor(() => (stderr.includes('tunnel:') ? true : undefined), 15_000, 'the tunnel');
        child.kill('SIGINT');
        const r = await done;
        assert.equal(r.code, 130, `${args[0]}: ${r.stderr}`);
        await waitFor(() => (processesWith(`-p ${sshd.port} `).length ? undefined : true), 5_000, `${args[0]}: no ssh process left`);
      }
    } finally {
      silent.close();
    }
  });

  for (const batch of [true, false]) {
    it(`scatter --via ${batch ? 'batched' : 'individual'}: kill -9 of the master mid-run, every prompt answered after one reconnect`, async () => {
      const slow = await startSim(dir, `slow-${batch}.hostfile`, 2, ['--ttft-ms', batch ? '1500' : '100']);
      try {
        const prompts = await writeText(dir, `mid-${batch}.txt`, Array.from({ length: 40 }, (_, i) => `q${i}`).join('\n'));
        const out = join(dir, `mid-${batch}.jsonl`);
        const before = sshd.logins();
        const child = spawnCli(['scatter', '--hostfile', slow.hostfile, ...ssh(), '--prompts', prompts, '--out', out, '--quiet', ...(batch ? [] : ['--no-batch', '--concurrency', '2'])]);
        let stderr = '';
        child.stderr!.on('data', (d: Buffer) => (stderr += d));
        const done = finished(child, 'scatter --via', 60_000);
        await waitFor(() => (stderr.includes('tunnel:') ? true : undefined), 15_000, 'the tunnel');
        const [master] = masters(sshd.port);
        if (!batch) await waitFor(async () => ((await stat(`${out}.partial`).catch(() => undefined))?.size ? true : undefined), 15_000, 'a first result');
        // Batched: both servers hold their list (1.5 s each), as their own /metrics say.
        else await waitFor(async () => ((await Promise.all(slow.endpoints.map(running))).every((n) => n > 0) ? true : undefined), 15_000, 'a list running on each server');
        process.kill(master!, 'SIGKILL');
        const r = await done;
        assert.equal(r.code, 0, r.stderr);
        const rows = (await readFile(out, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
        assert.deepEqual(rows.map((x) => [x.index, x.status]), rows.map((_, i) => [i, 'ok']));
        assert.equal(sshd.logins() - before, 2, 'one login, one reconnect');
        assert.deepEqual(processesWith(`-p ${sshd.port} `), [], 'no ssh process left');
      } finally {
        await slow.stop();
      }
    });
  }

  it('rejects a bad login host or ssh option as bad input, before running ssh', async () => {
    for (const args of [
      ['--via', '-oProxyCommand=touch /tmp/x'],
      ['--via', 'login', '--ssh-option', 'ProxyCommand=touch /tmp/x'],
      ['--via', 'login', '--remote-hostfile', '../etc/passwd'],
    ]) {
      const hostfileArgs = args.includes('--remote-hostfile') ? [] : ['--hostfile', sim.hostfile];
      const r = await runCli(['health', ...hostfileArgs, ...args, '--ssh-path', '/nonexistent/ssh']);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /cannot run/);
    }
  });
});

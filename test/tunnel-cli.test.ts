import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, finished, jsonLines, killAll, runCli, spawnCli, startSim, tempDir, waitFor, writeText, type Sim } from './helpers/cli.ts';
import { haveSshd, TestSshd } from './helpers/sshd.ts';

/** Live (non-zombie) processes whose command line mentions `needle`. */
function processesWith(needle: string): string[] {
  return execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(needle) && !l.trim().startsWith('Z') && !l.includes('ps -eo'));
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
    assert.ok(processesWith(`-p ${sshd.port}`).length > 0, 'an ssh master runs while the tunnel is up');

    child.kill('SIGINT');
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /tunnel closed/);
    assert.equal(sshd.logins() - before, 1);
    assert.deepEqual(processesWith('-O forward'), []);
    assert.deepEqual(processesWith(`-p ${sshd.port}`), [], 'no ssh process left');
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
    assert.deepEqual(jsonLines(r.stdout).map((x) => [x.endpoint, x.status]), sim.endpoints.map((e) => [e, 'healthy']));
  });

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

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, afterEach, before, describe, it } from 'node:test';
import { checkHealth, endpointId, scatterGather, SharedLogins, SshArgumentError, SshLogin, Tunnel, hostfileFromText, type Endpoint, type LoginCommand, type TunnelOptions } from '../src/core/index.ts';
import { freeLocalPort } from '../src/core/tunnels/local-port.ts';
import { Fixture, prompts } from './helpers/swarm.ts';
import { haveSshd, masters, TestSshd } from './helpers/sshd.ts';
import { patience, until } from './helpers/patience.ts';

const texts = (rs: Array<{ text: string }>) => rs.map((r) => r.text);

/** Live (non-zombie) ssh client processes talking to this test's sshd. */
function liveSshClients(port: number): string[] {
  const out = execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((l) => !l.trim().startsWith('Z') && /^\S+\s+ssh\s/.test(l.trim()) && l.includes(`-p ${port}`));
}
function waitForValue<T>(probe: () => T | undefined, what: string): Promise<T> {
  return until(probe, what, 10_000, { ready: (v) => v !== undefined, intervalMs: 20 }) as Promise<T>;
}
async function gone(pid: number): Promise<void> {
  const exists = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await until(() => !exists(), `process ${pid} to end`, 15_000, { intervalMs: 20 });
}
function listeningPorts(): Set<number> {
  const out = execFileSync('ss', ['-Hltn'], { encoding: 'utf8' });
  return new Set(out.split('\n').map((l) => Number(/127\.0\.0\.1:(\d+)/.exec(l)?.[1])).filter(Boolean));
}

describe('SSH tunnels against a real sshd', { skip: haveSshd ? false : 'openssh-server is not installed (scripts/install-test-deps.sh)' }, () => {
  const sshd = new TestSshd();
  const fx = new Fixture();
  const opened: Tunnel[] = [];
  const options = (extra: Partial<TunnelOptions> = {}): TunnelOptions => ({ via: sshd.via, sshConfigFile: sshd.clientConfig, watchIntervalMs: 200, ...extra });
  const open = async (endpoints: readonly Endpoint[], extra: Partial<TunnelOptions> = {}) => {
    const t = await Tunnel.open(endpoints, options(extra));
    opened.push(t);
    return t;
  };

  before(() => sshd.start());
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.close()));
    await fx.close();
  });
  after(() => sshd.stop());

  it('forward mode: 20 endpoints through one master and one login; results name the real endpoints, in order', async () => {
    const sim = await fx.sim(20);
    const before = sshd.logins();
    const tunnel = await open(sim.endpoints, { mode: 'forward' });
    assert.equal(tunnel.mode, 'forward');
    const local = tunnel.localEndpoints();
    assert.deepEqual(local.map((e) => e.host), Array(20).fill('127.0.0.1'));
    assert.ok(local.every((e, i) => e.port !== sim.endpoints[i]!.port), 'local ports are the forwards, not the endpoints');
    const pool = fx.pool(sim.endpoints, { routes: tunnel.routes, hedge: false }); // see the SOCKS test
    const report = await scatterGather(pool, prompts(40), { maxTokens: 20 }).done;
    assert.deepEqual(texts(report.results), prompts(40).map((p) => `completion: ${p}`));
    assert.deepEqual(report.results.map((r) => r.endpoint), prompts(40).map((_, i) => endpointId(sim.endpoints[i % 20]!)));
    assert.equal(sshd.logins() - before, 1, 'one authentication for every forward and request');
  });

  it('SOCKS mode: 200 endpoints through one -D proxy, one login', async () => {
    const sim = await fx.sim(200);
    const before = sshd.logins();
    const tunnel = await open(sim.endpoints);
    assert.equal(tunnel.mode, 'socks', 'auto mode picks SOCKS above the threshold');
    assert.match(tunnel.socksAddress!, /^127\.0\.0\.1:\d+$/);
    // No hedging: on a loaded machine the last lists through one ssh process can take over a second, and a
    // hedge that wins would (rightly) answer from another endpoint, breaking the i mod n check this test makes.
    const pool = fx.pool(sim.endpoints, { routes: tunnel.routes, hedge: false });
    const report = await scatterGather(pool, prompts(400), { maxTokens: 20 }).done;
    assert.equal(report.summary.ok, 400, report.results.find((r) => !r.ok)?.error ?? '');
    assert.deepEqual(report.results.map((r) => r.endpoint), prompts(400).map((_, i) => endpointId(sim.endpoints[i % 200]!)));
    assert.equal(sim.servers.reduce((s, x) => s + x.stats().generationRequests, 0), 200);
    assert.equal(sshd.logins() - before, 1);
  });

  it('one ssh process for every forward (the Windows way) also takes one login', async () => {
    const sim = await fx.sim(3);
    const before = sshd.logins();
    const tunnel = await open(sim.endpoints, { singleProcess: true, mode: 'forward' });
    const report = await scatterGather(fx.pool(sim.endpoints, { routes: tunnel.routes }), prompts(6), { maxTokens: 20 }).done;
    assert.equal(report.summary.ok, 6);
    assert.equal(sshd.logins() - before, 1);
  });

  it('sshd killed mid-run: every endpoint turns tunnel-down with its prompts failed; reconnect works once sshd is back', async () => {
    // Answers that never come: sshd is killed once every request has reached its server, however
    // long that takes on a busy machine, so no prompt can finish before the tunnel goes.
    const sim = await fx.sim(3, { hang: true });
    const tunnel = await open(sim.endpoints, { mode: 'forward' });
    const pool = fx.pool(sim.endpoints, { routes: tunnel.routes, failover: false, hedge: false });
    const down = new Promise<string>((resolve) => tunnel.once('down', resolve));
    const run = scatterGather(pool, prompts(6), { batch: false, maxTokens: 5 });
    await waitForValue(() => (sim.servers.reduce((n, s) => n + s.stats().generationRequests, 0) >= 6 ? true : undefined), 'every request at its server');
    await sshd.kill();
    const report = await run.done;
    assert.match(await down, /ssh master .* is gone/);
    assert.equal(report.summary.ok, 0);
    assert.deepEqual(report.results.map((r) => r.index), [0, 1, 2, 3, 4, 5]);
    assert.ok(report.results.every((r) => r.status === 'failed' && /tunnel down/.test(r.error!)), report.results.map((r) => r.error).join('\n'));
    const health = await checkHealth(pool);
    assert.deepEqual(health.map((h) => h.status), ['tunnel-down', 'tunnel-down', 'tunnel-down']);
    assert.deepEqual(health.map((h) => h.endpoint), sim.endpoints.map(endpointId), 'the tree names compute nodes, not local ports');

    for (const server of sim.servers) server.setFaults({ hang: false });
    await sshd.start();
    await tunnel.reconnect();
    pool.forget();
    const again = await scatterGather(pool, prompts(6), { batch: false, maxTokens: 5 }).done;
    assert.equal(again.summary.ok, 6, again.results.find((r) => !r.ok)?.error ?? '');
    assert.deepEqual((await checkHealth(pool)).map((h) => h.status), ['up', 'up', 'up']);
  });

  it('moves a forward to the next local port when its port is taken', async () => {
    const sim = await fx.sim(2);
    const base = await freeLocalPort();
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(base, '127.0.0.1', r));
    try {
      const tunnel = await open(sim.endpoints, { mode: 'forward', localPortBase: base });
      const ports = tunnel.localEndpoints().map((e) => e.port);
      assert.ok(!ports.includes(base), `the taken port ${base} is not used (${ports})`);
      const report = await scatterGather(fx.pool(sim.endpoints, { routes: tunnel.routes }), prompts(4), { maxTokens: 20 }).done;
      assert.equal(report.summary.ok, 4);
    } finally {
      blocker.close();
    }
  });

  it('a dead remote target is that endpoint down (channel open failed), not the tunnel', async () => {
    const sim = await fx.sim(2);
    const dead = { host: '127.0.0.1', port: await freeLocalPort(), tags: {} };
    const tunnel = await open([...sim.endpoints, dead], { mode: 'forward' });
    const health = await checkHealth(fx.pool([...sim.endpoints, dead], { routes: tunnel.routes }));
    assert.deepEqual(health.map((h) => h.status), ['up', 'up', 'down']);
    assert.ok(await tunnel.alive(), 'the master survives a failed channel');
  });

  it('rejects bad host names, users and ssh options before any process starts', async () => {
    const noSsh = { sshPath: '/nonexistent/ssh' };
    for (const via of ['-oProxyCommand=touch /tmp/x', 'bad host', 'user;rm@host', 'host:0', 'ho$t']) {
      await assert.rejects(Tunnel.open([], { via, ...noSsh }), SshArgumentError, via);
    }
    await assert.rejects(Tunnel.open([], { via: 'login', sshOptions: ['ProxyCommand=sh -c x'], ...noSsh }), /not allowed here/);
    await assert.rejects(Tunnel.open([], { via: 'login', sshOptions: ['Port=22\nProxyCommand=x'], ...noSsh }), SshArgumentError);
    await assert.rejects(Tunnel.open([{ host: '-oProxyCommand=x', port: 1, tags: {} }], { via: 'login', ...noSsh }), SshArgumentError);
    await assert.rejects(Tunnel.open([], { via: 'login', sshPath: '-x' }), SshArgumentError);
    // A valid request does reach the (missing) binary: the errors above came before any spawn.
    await assert.rejects(Tunnel.open([], { via: 'login', ...noSsh }), /cannot run \/nonexistent\/ssh/);
  });

  it('reads a hostfile on the login node over the same connection', async () => {
    const path = join(sshd.dir, 'job.hostfile');
    writeFileSync(path, 'x4309c4s0b0n0\t6739\trole=chat\nx4309c4s1b0n0\t6739\trole=embed\n');
    const before = sshd.logins();
    const login = await SshLogin.create(options());
    try {
      const text = await login.readRemoteFile(path);
      assert.deepEqual(hostfileFromText(text).endpoints.map(endpointId), ['x4309c4s0b0n0:6739', 'x4309c4s1b0n0:6739']);
      await assert.rejects(login.readRemoteFile(`${path}; touch /tmp/pwned`), SshArgumentError);
      await assert.rejects(login.readRemoteFile('relative/path'), SshArgumentError);
      assert.equal(sshd.logins() - before, 1);
    } finally {
      await login.close();
    }
  });

  it("a command's output copied into a slow writer arrives whole, and the writer ends: its last bytes may drain well after ssh exits", async () => {
    const path = join(sshd.dir, 'rows.jsonl');
    const text = Array.from({ length: 20_000 }, (_, i) => `{"index":${i}}`).join('\n');
    writeFileSync(path, text);
    const login = await SshLogin.create(options());
    try {
      // 250 ms per chunk written: ssh's last 64 KB or so are still in the pipe when it exits, as when a loaded machine reads them.
      let got = '';
      const slow = new Writable({ highWaterMark: 1, write: (chunk: Buffer, _enc, done) => void setTimeout(() => ((got += chunk), done()), 250) });
      const r = await login.commands().run(['cat', path], { stdout: slow });
      assert.equal(r.code, 0, r.stderr);
      await until(() => slow.writableFinished, 'the writer to end', 30_000);
      assert.equal(got.length, text.length, 'every byte copied');
    } finally {
      await login.close();
    }
  });

  it('one login shared by its users (SharedLogins): two tunnels and a command runner log in once; closing one leaves the others working; the last close ends the master', async () => {
    const sim = await fx.sim(2);
    const logins = new SharedLogins();
    const key = SshLogin.key(options());
    const before = sshd.logins();
    let made = 0;
    const create = () => {
      made++;
      return SshLogin.create(options());
    };
    // Three users asking at once (a login under way is joined, not doubled).
    const [jobs, first, second] = await Promise.all([logins.acquire(key, create), logins.acquire(key, create), logins.acquire(key, create)]);
    assert.equal(made, 1);
    const a = await Tunnel.open([sim.endpoints[0]!], options({ mode: 'forward' }), first);
    const b = await Tunnel.open([sim.endpoints[1]!], options({ mode: 'forward' }), second);
    assert.equal(sshd.logins() - before, 1, 'one login for all three');
    assert.equal(masters(sshd.port).length, 1);
    const portA = a.localEndpoints()[0]!.port;
    await a.close();
    assert.equal(listeningPorts().has(portA), false, "the closed tunnel's forward is dropped");
    const report = await scatterGather(fx.pool([sim.endpoints[1]!], { routes: b.routes }), prompts(3), { maxTokens: 20 }).done;
    assert.equal(report.summary.ok, 3, 'the other tunnel still carries traffic');
    await b.close();
    assert.equal((await jobs.commands().exec(['echo', 'still here'])).trim(), 'still here', 'the last user still runs commands on it');
    assert.equal(masters(sshd.port).length, 1);
    await jobs.close();
    await jobs.close(); // a handle closes once: a second close does nothing
    assert.deepEqual(masters(sshd.port), [], 'the last user gone, the master ends');
    // Nobody holds it: no command runs (ssh would log in by itself), and the next user logs in afresh.
    assert.equal((await jobs.commands().run(['true'])).code, 255);
    const again = await logins.acquire(key, create);
    assert.equal(made, 2);
    assert.equal(sshd.logins() - before, 2);
    await again.close();
    assert.deepEqual(masters(sshd.port), []);
  });

  it("rides the user's own ControlMaster (no second login) and leaves it running on close", async () => {
    const sim = await fx.sim(2);
    const userConfig = join(sshd.dir, 'user_config');
    const controlPath = join(sshd.dir, 'cm-%C');
    writeFileSync(userConfig, `${readFileSync(sshd.clientConfig, 'utf8')}  ControlMaster auto\n  ControlPath ${controlPath}\n  ControlPersist 60\n`);
    const target = sshd.via.replace(/:\d+$/, '');
    const base = ['-F', userConfig, '-p', String(sshd.port)];
    execFileSync('ssh', [...base, '-fN', target]); // the user's own login, earlier, elsewhere
    try {
      const before = sshd.logins();
      const tunnel = await Tunnel.open(sim.endpoints, { via: sshd.via, sshConfigFile: userConfig, mode: 'forward' });
      const report = await scatterGather(fx.pool(sim.endpoints, { routes: tunnel.routes }), prompts(4), { maxTokens: 20 }).done;
      assert.equal(report.summary.ok, 4);
      const ports = tunnel.localEndpoints().map((e) => e.port);
      await tunnel.close();
      assert.equal(sshd.logins() - before, 0, 'no new login: the user\'s master carried it');
      execFileSync('ssh', [...base, '-O', 'check', target], { stdio: 'ignore' }); // throws if the master is gone
      const still = listeningPorts();
      assert.deepEqual(ports.filter((p) => still.has(p)), [], 'our forwards were cancelled');
    } finally {
      execFileSync('ssh', [...base, '-O', 'exit', target], { stdio: 'ignore' });
    }
  });

  it('hands the first login to the caller (a terminal for the one-time password), then carries on', async () => {
    const sim = await fx.sim(2);
    const before = sshd.logins();
    let shown: LoginCommand | undefined;
    const login = await SshLogin.create(options(), (cmd) => {
      shown = cmd;
      // What the extension does in a VS Code terminal: run exactly this command.
      execFileSync(cmd.command, cmd.args, { stdio: 'ignore' });
    });
    const tunnel = await Tunnel.open(sim.endpoints, options({ mode: 'forward' }), login);
    opened.push(tunnel);
    assert.ok(shown && shown.args.includes('-M') && shown.args.includes('-f'), 'a master login command');
    const report = await scatterGather(fx.pool(sim.endpoints, { routes: tunnel.routes }), prompts(2), { maxTokens: 20 }).done;
    assert.equal(report.summary.ok, 2);
    assert.equal(sshd.logins() - before, 1);
  });

  it('kill -9 of the master: awaitUp removes the stale socket, logs in once more, and the routes carry traffic again', async () => {
    const sim = await fx.sim(3);
    const tunnel = await open(sim.endpoints, { mode: 'forward' });
    const pool = fx.pool(sim.endpoints, { routes: tunnel.routes });
    const clientsBefore = liveSshClients(sshd.port).length;
    const before = sshd.logins();
    const [master] = masters(sshd.port);
    assert.ok(master, 'our master runs');
    process.kill(master, 'SIGKILL');
    await gone(master);
    assert.equal(await tunnel.alive(), false);
    // Every request in flight fails at once and asks: they share one check and one reconnect.
    const answers = await Promise.all(Array.from({ length: 50 }, () => tunnel.awaitUp(undefined, patience(30_000))));
    assert.deepEqual(new Set(answers), new Set([true]));
    assert.equal(sshd.logins() - before, 1, 'one new login');
    assert.equal(masters(sshd.port).length, 1, 'one master, not a plain session beside a stale socket');
    const report = await scatterGather(pool, prompts(6), { maxTokens: 5 }).done;
    assert.equal(report.summary.ok, 6, report.results.find((r) => !r.ok)?.error ?? '');
    assert.equal(await tunnel.awaitUp(undefined, 30_000), false, 'an intact route: the failure was the endpoint\'s, nothing to re-send for');
    assert.equal(sshd.logins() - before, 1, 'no login for a live master');

    // A forward lost on a live master comes back without a login.
    const args = liveSshClients(sshd.port).find((l) => / -M /.test(l))!;
    const socket = / -S (\S+)/.exec(args)![1]!;
    const [first] = tunnel.localEndpoints();
    execFileSync('ssh', ['-F', sshd.clientConfig, '-S', socket, '-O', 'cancel', '-L', `127.0.0.1:${first!.port}:${sim.endpoints[0]!.host}:${sim.endpoints[0]!.port}`, 'x'], { stdio: 'ignore' });
    assert.equal(await tunnel.awaitUp(undefined, patience(30_000)), true, 'the forward is back');
    assert.equal((await scatterGather(pool, prompts(3), { maxTokens: 5 }).done).summary.ok, 3);
    assert.equal(sshd.logins() - before, 1, 'still no new login');
    assert.equal(liveSshClients(sshd.port).length, clientsBefore);
  });

  it('selfHeal: a killed master comes back on its own (one login) in SOCKS mode; a reconnect that cannot succeed is bounded', async () => {
    const sim = await fx.sim(2);
    const tunnel = await open(sim.endpoints, { mode: 'socks', selfHeal: true });
    const before = sshd.logins();
    const up = new Promise<void>((resolve) => tunnel.once('up', resolve));
    process.kill(masters(sshd.port)[0]!, 'SIGKILL');
    await up;
    assert.equal(sshd.logins() - before, 1);
    const report = await scatterGather(fx.pool(sim.endpoints, { routes: tunnel.routes }), prompts(4), { maxTokens: 5 }).done;
    assert.equal(report.summary.ok, 4);

    await sshd.kill(); // the login node is gone: reconnect attempts fail until it is back
    assert.equal(await tunnel.awaitUp(undefined, 300), false, 'bounded');
    const aborted = new AbortController();
    const waiting = tunnel.awaitUp(aborted.signal, 60_000);
    aborted.abort();
    assert.equal(await waiting, false, 'abortable');
    await sshd.start();
    assert.equal(await tunnel.awaitUp(undefined, patience(30_000)), true);
    assert.equal(masters(sshd.port).length, 1);
  });

  it('single-process mode (the Windows way) heals too: a killed ssh is started again on the same ports, one login', async () => {
    const sim = await fx.sim(2);
    const tunnel = await open(sim.endpoints, { singleProcess: true, mode: 'forward', selfHeal: true });
    const ports = tunnel.localEndpoints().map((e) => e.port);
    const before = sshd.logins();
    const carrier = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n').find((l) => l.includes(`-p ${sshd.port}`) && / -N /.test(l) && !/ -M /.test(l));
    const up = new Promise<void>((resolve) => tunnel.once('up', resolve));
    process.kill(Number(carrier!.trim().split(/\s+/)[0]), 'SIGKILL');
    await up;
    assert.equal(sshd.logins() - before, 1);
    assert.deepEqual(tunnel.localEndpoints().map((e) => e.port), ports, 'same local ports');
    const report = await scatterGather(fx.pool(sim.endpoints, { routes: tunnel.routes }), prompts(4), { maxTokens: 5 }).done;
    assert.equal(report.summary.ok, 4);
  });

  it('close() during a reconnect whose login hangs ends that login too: no ssh process left', async () => {
    const sim = await fx.sim(1);
    const tunnel = await Tunnel.open(sim.endpoints, options({ mode: 'forward', selfHeal: true }));
    const clientsBefore = liveSshClients(sshd.port).length - 1; // ours is the one master
    await sshd.kill();
    // The login node's port now accepts and never speaks: a login attempt waits for its banner.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(sshd.port, '127.0.0.1', r));
    try {
      const reconnecting = new Promise<void>((resolve) => tunnel.once('down', () => resolve()));
      await reconnecting;
      await waitForValue(() => (liveSshClients(sshd.port).some((l) => / -M /.test(l)) ? true : undefined), 'a login under way');
      await tunnel.close();
      assert.equal(liveSshClients(sshd.port).length, clientsBefore, 'the hanging login was ended');
    } finally {
      silent.close();
      await sshd.start();
    }
  });

  it('the master holds no secret from our environment', { skip: process.platform === 'linux' ? false : '/proc only on Linux' }, async () => {
    const saved = { SWARM_API_KEY: process.env.SWARM_API_KEY, VLLM_API_KEY: process.env.VLLM_API_KEY };
    Object.assign(process.env, { SWARM_API_KEY: 'swarm-secret-1234', VLLM_API_KEY: 'vllm-secret-5678' });
    try {
      const sim = await fx.sim(1);
      await open(sim.endpoints, { mode: 'forward' });
      const environ = readFileSync(`/proc/${masters(sshd.port)[0]}/environ`, 'utf8');
      assert.doesNotMatch(environ, /secret|SWARM_API_KEY|VLLM_API_KEY/);
      assert.match(environ, /(^|\0)HOME=/, 'what ssh needs is still there');
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('teardown leaves no ssh process and no listening port behind', async () => {
    const sim = await fx.sim(4);
    const clientsBefore = liveSshClients(sshd.port).length;
    for (const extra of [{ mode: 'forward' as const }, { mode: 'socks' as const }, { mode: 'forward' as const, singleProcess: true }]) {
      const tunnel = await Tunnel.open(sim.endpoints, options(extra));
      const ports = tunnel.mode === 'forward' ? tunnel.localEndpoints().map((e) => e.port) : [Number(tunnel.socksAddress!.split(':')[1])];
      assert.ok(ports.every((p) => listeningPorts().has(p)), 'forwards listen while open');
      assert.ok(liveSshClients(sshd.port).length > clientsBefore, 'an ssh process carries them');
      await tunnel.close();
      const still = listeningPorts();
      assert.deepEqual(ports.filter((p) => still.has(p)), [], `${JSON.stringify(extra)}: no port left listening`);
      assert.equal(liveSshClients(sshd.port).length, clientsBefore, `${JSON.stringify(extra)}: no ssh process left`);
    }
  });
});

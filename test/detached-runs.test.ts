import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, finished, jsonLines, killAll, runCli, spawnCli, startSim, tempDir, waitFor, writeText, type Sim } from './helpers/cli.ts';
import { haveSshd, masters, TestSshd } from './helpers/sshd.ts';
import { pacingGate } from './helpers/pacing-gate.ts';
import { tlsGateway } from './helpers/tls-gateway.ts';
import { secretEnvName } from '../src/core/process/secret-env.ts';

/**
 * Detached runs with the built CLI: started here (a folder of runs per test) and on a login node
 * that is a real sshd on loopback, where the CLI is copied and run with the machine's node. The
 * client and the login go away mid-run; the run does not.
 */

interface View {
  id: string;
  live: string;
  done: number;
  total: number;
  ok: number;
  cancelled: number;
  exitCode?: number;
  results?: string;
  pid: number;
}

/** Control characters, quotes and characters of 2, 3 and 4 bytes: a copy that splits one between two reads shows. */
const text = (i: number) => `question ${i} \u0007 "quoted" é 日本語 🐝`;
const prompts = (n: number) => Array.from({ length: n }, (_, i) => text(i)).join('\n');

/** Every row once, in input order, each carrying its own prompt. */
function assertInOrder(rows: Array<Record<string, any>>, n: number): void {
  assert.equal(rows.length, n);
  rows.forEach((r, i) => {
    assert.equal(r.index, i);
    assert.equal(r.prompt, text(i));
  });
}

describe('detached runs on this machine', () => {
  let dir = '';
  let cleanup: () => Promise<void>;
  let sim: Sim;
  let env: Record<string, string>;

  before(async () => {
    ensureBuilt();
    ({ dir, cleanup } = await tempDir());
    // Slow enough that a run of 300 individual prompts, 4 at a time, is still going when it is cancelled.
    sim = await startSim(dir, 'hosts', 2, ['--ttft-ms', '30']);
    env = { SWARM_RUNS_DIR: join(dir, 'runs') };
  });
  after(async () => {
    await killAll();
    await sim.stop();
    await cleanup();
  });

  it('--detach returns with a run id; runs lists it; attach shows its end and exits 0 with every result in order', async () => {
    const p = await writeText(dir, 'p1.txt', prompts(200));
    const started = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', p, '--detach'], { env });
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    assert.match(id, /^\d{8}-\d{6}-[0-9a-f]{6}$/);
    // A machine fast enough ends these 9 requests before the run is seen sending: then it says so, with the run's own last lines.
    assert.match(started.stderr, new RegExp(`detached run ${id} on this machine \\(pid \\d+|run ${id} ended at once \\(exit 0\\)`));
    const attached = await runCli(['attach', id, '--out', join(dir, 'copy1.jsonl')], { env, timeoutMs: 60_000 });
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stderr, /finished \(exit 0\)\s+200\/200 · 0 failed/);
    assertInOrder(jsonLines(await readFile(join(dir, 'copy1.jsonl'), 'utf8')), 200);
    const listed = await runCli(['runs', '--json'], { env });
    const runs = JSON.parse(listed.stdout) as View[];
    assert.deepEqual(runs.map((r) => [r.id, r.live, r.exitCode, r.ok]), [[id, 'finished', 0, 200]]);
  });

  it('what a run warned of is kept and shown as warnings, not errors: an all-ok run with an endpoint left out', async () => {
    const hostfile = await writeText(dir, 'with-dead.hostfile', `${sim.lines.join('\n')}\n127.0.0.1\t1\n`);
    const started = await runCli(['scatter', '--hostfile', hostfile, '--prompts', await writeText(dir, 'pw.txt', prompts(6)), '--detach'], { env });
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    const attached = await runCli(['attach', id], { env, timeoutMs: 60_000 });
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stderr, /^ {2}warning: left out 1 endpoint\(s\) that cannot be used: 127\.0\.0\.1:1 /m);
    assert.doesNotMatch(attached.stderr, /^ {2}error: /m);
    const status = JSON.parse(await readFile(join(env.SWARM_RUNS_DIR!, id, 'status.json'), 'utf8'));
    assert.deepEqual([status.exitCode, status.ok, status.errors], [0, 6, []]);
    assert.equal(status.warnings.length, 1);
  });

  it('cancel stops a detached run keeping every finished result; attach exits with its code (143)', async () => {
    const p = await writeText(dir, 'p2.txt', prompts(300));
    const started = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', p, '--no-batch', '--concurrency', '2', '--detach'], { env });
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    await waitFor(async () => {
      const [run] = JSON.parse((await runCli(['runs', '--json', id], { env })).stdout) as View[];
      return run!.ok >= 10 ? true : undefined;
    }, 30_000, 'ten results');
    const cancelled = await runCli(['cancel', id], { env, timeoutMs: 60_000 });
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.match(cancelled.stderr, /finished \(exit 143\)/);
    const attached = await runCli(['attach', id, '--out', join(dir, 'copy2.jsonl')], { env });
    assert.equal(attached.code, 143, attached.stderr);
    const rows = jsonLines(await readFile(join(dir, 'copy2.jsonl'), 'utf8'));
    assertInOrder(rows, 300);
    const ok = rows.filter((r) => r.status === 'ok').length;
    assert.ok(ok >= 10 && ok < 300, `${ok} ok`);
    assert.equal(rows.filter((r) => r.status === 'cancelled').length, 300 - ok);
  });

  it('the status file catches up with a burst of answers that nothing follows (a server that then hangs): it says 12 done, not the burst\'s first', async () => {
    const gate = await pacingGate(sim.endpoints);
    try {
      gate.allow(12);
      const hostfile = await writeText(dir, 'gated.hostfile', `${gate.lines.join('\n')}\n`);
      const p = await writeText(dir, 'pg.txt', prompts(40));
      const started = await runCli(['scatter', '--hostfile', hostfile, '--prompts', p, '--no-batch', '--concurrency', '1', '--detach'], { env });
      assert.equal(started.code, 0, started.stderr);
      const id = started.stdout.trim();
      const view = async () => (JSON.parse((await runCli(['runs', '--json', id], { env })).stdout) as View[])[0]!;
      // The twelve answers come within the status file's pace; the thirteenth request is held.
      await waitFor(async () => ((await view()).done === 12 ? true : undefined), 30_000, 'the status to say 12 done');
      assert.equal(gate.passed(), 12);
      gate.open();
      await waitFor(async () => ((await view()).live === 'finished' ? true : undefined), 30_000, 'the run to finish');
      assert.deepEqual([(await view()).ok, (await view()).exitCode], [40, 0]);
    } finally {
      gate.open();
      await gate.close();
    }
  });

  it('bad input ends a detached run at once: its message here, exit 2, and its status says so', async () => {
    const p = await writeText(dir, 'p3.txt', prompts(3));
    const r = await runCli(['scatter', '--hostfile', join(dir, 'nope'), '--prompts', p, '--detach'], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /nope/);
    assert.match(r.stderr, /ended at once \(exit 2\)/);
    const runs = JSON.parse((await runCli(['runs', '--json'], { env })).stdout) as View[];
    assert.deepEqual([runs.at(-1)!.live, runs.at(-1)!.exitCode], ['finished', 2]);
  });

  it('a run killed with SIGKILL is seen as died: attach says where its rows are and exits 1; --resume completes them', async () => {
    const p = await writeText(dir, 'p4.txt', prompts(300));
    const out = join(dir, 'killed.jsonl');
    const started = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', p, '--out', out, '--no-batch', '--concurrency', '2', '--detach'], { env });
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    const [running] = await waitFor(async () => {
      const runs = JSON.parse((await runCli(['runs', '--json', id], { env })).stdout) as View[];
      return runs[0]!.ok >= 10 ? runs : undefined;
    }, 30_000, 'ten results');
    process.kill(running!.pid, 'SIGKILL');
    await waitFor(() => (existsSync(`/proc/${running!.pid}`) ? undefined : true), 10_000, 'the run to be gone');
    const [dead] = JSON.parse((await runCli(['runs', '--json', id], { env })).stdout) as View[];
    assert.equal(dead!.live, 'died');
    const attached = await runCli(['attach', id], { env });
    assert.equal(attached.code, 1);
    assert.match(attached.stderr, new RegExp(`run ${id} died \\(its process ${running!.pid} on .* is gone before it ended\\): its finished rows are in .*killed\\.jsonl\\.partial; complete them with swarm resume ${id}$`, 'm'));
    const resumed = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', p, '--resume', out, '--quiet'], { timeoutMs: 60_000 });
    assert.equal(resumed.code, 0, resumed.stderr);
    assertInOrder(jsonLines(await readFile(out, 'utf8')), 300);
  });

  it('a pattern command detached: attach prints its outcome', async () => {
    const started = await runCli(['reduce', '--hostfile', sim.hostfile, '--prompt', 'say hi', '--reduce-prompt', 'merge {responses}', '--detach'], { env });
    assert.equal(started.code, 0, started.stderr);
    const attached = await runCli(['attach', started.stdout.trim()], { env });
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stdout, /^completion: merge completion: say hi/);
  });

  it('key=secret:NAME: the key an editor hands in SWARM_SECRET_<NAME> reaches the detached run through its environment only (not its argv, status or log); without it, one clear line and exit 2', async () => {
    const gateway = await tlsGateway({ target: `http://${sim.lines[0]!.split('\t').join(':')}`, keys: new Set(['s3cret-key']) });
    try {
      const hostfile = await writeText(dir, 'secret.hosts', `${gateway.baseUrl}\tmodel=sim-model\tkey=secret:alcf.token-1\n`);
      const p = await writeText(dir, 'p-secret.txt', prompts(20));
      const without = await runCli(['scatter', '--hostfile', hostfile, '--prompts', p, '--detach'], { env });
      assert.equal(without.code, 2, without.stderr);
      assert.match(without.stderr, /key=secret:alcf\.token-1 is kept in VS Code's secret storage, which the command line cannot read/);
      const name = secretEnvName('alcf.token-1');
      assert.equal(name, 'SWARM_SECRET_alcf_2Etoken_2D1');
      const started = await runCli(['scatter', '--hostfile', hostfile, '--prompts', p, '--detach'], { env: { ...env, [name]: 's3cret-key' } });
      assert.equal(started.code, 0, started.stderr);
      const id = started.stdout.trim();
      const attached = await runCli(['attach', id, '--out', join(dir, 'secret.jsonl')], { env, timeoutMs: 60_000 });
      assert.equal(attached.code, 0, attached.stderr);
      assertInOrder(jsonLines(await readFile(join(dir, 'secret.jsonl'), 'utf8')), 20);
      for (const f of ['status.json', 'spec.json', 'log.txt', 'output.txt']) {
        const path = join(env.SWARM_RUNS_DIR!, id, f);
        if (existsSync(path)) assert.ok(!readFileSync(path, 'utf8').includes('s3cret-key'), `${f} holds no key`);
      }
    } finally {
      await gateway.close();
    }
  });

  it('an unknown run id is bad input', async () => {
    const r = await runCli(['attach', '20990101-000000-abcdef'], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no run 20990101-000000-abcdef in /);
    const bad = await runCli(['attach', '../../etc'], { env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /is not a run id/);
  });
});

describe('detached runs on a login node (a real sshd on loopback)', { skip: haveSshd ? false : 'no sshd (scripts/install-test-deps.sh installs openssh-server)' }, () => {
  let dir = '';
  let cleanup: () => Promise<void>;
  let sim: Sim;
  const sshd = new TestSshd();

  before(async () => {
    ensureBuilt();
    ({ dir, cleanup } = await tempDir());
    sim = await startSim(dir, 'hosts', 3, ['--ttft-ms', '30']);
    await sshd.start();
  });
  after(async () => {
    await killAll();
    await sim.stop();
    await sshd.stop();
    await cleanup();
  });

  const login = () => ['--via', sshd.via, '--ssh-config', sshd.clientConfig, '--runs-dir', join(dir, 'remote-runs')];

  it('outlives the client and the login: attach, kill it and sshd mid-run, come back, find every result in order', async () => {
    const n = 600;
    const p = await writeText(dir, 'p.txt', prompts(n));
    const started = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', p, '--no-batch', '--concurrency', '3', '--detach', ...login()], { env: { SWARM_API_KEY: 'sk-secret-never-in-argv' }, timeoutMs: 90_000 });
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    const folder = join(dir, 'remote-runs', id);
    // The inputs were copied to the login node; the key is nowhere in the run's arguments or files.
    const spec = readFileSync(join(folder, 'spec.json'), 'utf8');
    assert.ok(spec.includes(join(folder, 'inputs')));
    assert.ok(!spec.includes('sk-secret'));
    const status = () => JSON.parse(readFileSync(join(folder, 'status.json'), 'utf8')) as View;
    assert.ok(!readFileSync(`/proc/${status().pid}/cmdline`, 'utf8').includes('sk-secret'));
    assert.match(readFileSync(`/proc/${status().pid}/environ`, 'utf8'), /SWARM_API_KEY=sk-secret-never-in-argv/);

    // A client follows it, then dies with the login under it: killed client, killed sshd and its sessions, killed ssh master.
    const client = spawnCli(['attach', id, ...login()]);
    let seen = '';
    client.stderr!.on('data', (d: Buffer) => (seen += d));
    await waitFor(() => (status().ok >= 20 ? true : undefined), 60_000, 'twenty results');
    client.kill('SIGKILL');
    await waitFor(() => (sshd.busy().length === 0 ? true : undefined), 60_000, 'no command running in a session');
    await sshd.kill();
    for (const pid of masters(sshd.port)) process.kill(pid, 'SIGKILL');
    const before = status().done;
    assert.ok(before < n, `the run was over (${before}) before the login went away`);
    // The run goes on without any of them.
    await waitFor(() => (status().done > before ? true : undefined), 60_000, 'progress with no client and no login');

    await sshd.start();
    const listed = await runCli(['runs', id, ...login()], { timeoutMs: 60_000 });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${id}  (running|finished)`));
    const attached = await finished(spawnCli(['attach', id, '--out', join(dir, 'copy.jsonl'), ...login()]), 'attach', 120_000);
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stderr, new RegExp(`finished \\(exit 0\\)\\s+${n}/${n} · 0 failed`));
    assert.match(attached.stderr, /copied 600 rows to .*copy\.jsonl, in input order/);
    const rows = jsonLines(await readFile(join(dir, 'copy.jsonl'), 'utf8'));
    assertInOrder(rows, n);
    assert.ok(rows.every((r) => r.status === 'ok'));
  });

  it('swarm resume RUN through the login: a run killed mid-way finishes exactly the prompts without a result, every row kept; an unknown run or changed prompts are refused (exit 2)', async () => {
    const n = 200;
    const p = await writeText(dir, 'pr.txt', prompts(n));
    const started = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', p, '--no-batch', '--concurrency', '2', '--detach', ...login()], { timeoutMs: 90_000 });
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    const folder = join(dir, 'remote-runs', id);
    const status = () => JSON.parse(readFileSync(join(folder, 'status.json'), 'utf8')) as View;
    await waitFor(() => (status().ok >= 20 ? true : undefined), 60_000, 'twenty results');
    const { pid } = status();
    process.kill(pid, 'SIGKILL');
    await waitFor(() => (existsSync(`/proc/${pid}`) ? undefined : true), 10_000, 'the run to be gone');
    const kept = jsonLines(readFileSync(join(folder, 'results.jsonl.partial'), 'utf8')).filter((r) => r.status === 'ok').length;
    assert.ok(kept >= 20 && kept < n, `${kept} rows kept`);

    const unknown = await runCli(['resume', '20990101-000000-abcdef', ...login()], { timeoutMs: 60_000 });
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(unknown.stderr, /no run 20990101-000000-abcdef in /);
    // The prompts the run reads are its copy on the login node: changed there, they are not the run's any more.
    const copy = JSON.parse(readFileSync(join(folder, 'spec.json'), 'utf8')).inputs.find((f: { flag: string }) => f.flag === '--prompts').path as string;
    const original = readFileSync(copy);
    writeFileSync(copy, `${prompts(n)}\none more`);
    const changed = await runCli(['resume', id, ...login()], { timeoutMs: 60_000 });
    assert.equal(changed.code, 2, changed.stderr);
    assert.match(changed.stderr, new RegExp(`^run ${id}'s --prompts file .* changed since the run started \\(sha256 [0-9a-f]{12}…, now [0-9a-f]{12}…\\)`, 'm'));
    writeFileSync(copy, original);

    const resumed = await runCli(['resume', id, ...login()], { env: { SWARM_API_KEY: 'sk-resumed' }, timeoutMs: 90_000 });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.stdout.trim(), id);
    assert.match(resumed.stderr, new RegExp(`^resumed run ${id} on .* \\(pid \\d+`, 'm'));
    // The key reaches the resumed run's environment only.
    assert.match(readFileSync(`/proc/${status().pid}/environ`, 'utf8'), /SWARM_API_KEY=sk-resumed/);
    const attached = await finished(spawnCli(['attach', id, '--out', join(dir, 'resumed.jsonl'), ...login()]), 'attach', 120_000);
    assert.equal(attached.code, 0, attached.stderr);
    // Exactly the prompts without an ok row were sent again.
    assert.equal(status().total, n - kept);
    assert.equal(status().ok, n - kept);
    const rows = jsonLines(await readFile(join(dir, 'resumed.jsonl'), 'utf8'));
    assertInOrder(rows, n);
    assert.ok(rows.every((r) => r.status === 'ok'));
    const again = await runCli(['resume', id, ...login()], { timeoutMs: 60_000 });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /finished with every prompt ok: nothing to resume/);
  });

  it('no node on the login node: one clear line, exit 2, nothing started', async () => {
    const p = await writeText(dir, 'p0.txt', prompts(2));
    const r = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', p, '--detach', ...login(), '--remote-node', '/opt/none/bin/node'], { timeoutMs: 60_000 });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^no `\/opt\/none\/bin\/node` on .*: detached runs need Node\.js 20 or later there/m);
    assert.equal(r.stdout, '');
  });
});

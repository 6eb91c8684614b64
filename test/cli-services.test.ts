import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { ensureBuilt, finished, jsonLines, killAll, runCli, spawnCli, startSim, tempDir, waitFor, writeText, type Sim } from './helpers/cli.ts';
import { haveSshd, TestSshd } from './helpers/sshd.ts';
import { makeTestCa, tlsGateway, type Gateway, type TestCa } from './helpers/tls-gateway.ts';
import { tokenCommand } from './helpers/token-command.ts';

/**
 * `swarm` against an OpenAI-compatible service on a base URL (HTTPS, a test CA, keys that expire)
 * mixed with plain servers in one hostfile: real child processes, real TLS over loopback.
 */
describe('swarm with base-URL services beside plain servers', () => {
  let dir = '';
  let cleanup: () => Promise<void>;
  let ca: TestCa;
  let behind: Sim; // the server the gateway fronts
  let plain: Sim; // two plain servers
  const gateways: Gateway[] = [];

  before(async () => {
    ensureBuilt();
    ({ dir, cleanup } = await tempDir());
    ca = makeTestCa(dir);
    behind = await startSim(dir, 'behind.hostfile', 1, ['--ttft-ms', '15']);
    plain = await startSim(dir, 'plain.hostfile', 2);
  });
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((g) => g.close()));
  });
  after(async () => {
    await behind.stop();
    await plain.stop();
    await killAll();
    await cleanup();
  });

  /** A gateway taking `keys` in front of the `behind` server, and a hostfile listing it (with `line` after its URL) and the plain servers. */
  async function mixed(keys: Set<string>, line = 'key=env:SERVICE_TOKEN', options: { apiOnly?: boolean } = {}) {
    const gateway = await tlsGateway({ target: `http://${behind.endpoints[0]}`, ca, keys, apiOnly: options.apiOnly ?? true });
    gateways.push(gateway);
    const hostfile = await writeText(dir, `mixed-${gateways.length}.hostfile`, `# a service and two compute nodes\n${gateway.baseUrl}\t${line}\n${plain.lines.join('\n')}\n`);
    return { gateway, hostfile };
  }

  const prompts = (n: number) => writeText(dir, `p${n}.txt`, Array.from({ length: n }, (_, i) => `prompt ${i + 1}`).join('\n') + '\n');

  it('scatters over a TLS service and plain servers, verified with --ca-file; results name the service by its base URL, what answered is written beside them', async () => {
    const { gateway, hostfile } = await mixed(new Set(['tok-secret-1']));
    const out = join(dir, 'mixed.jsonl');
    const env = { SERVICE_TOKEN: 'tok-secret-1' };
    const r = await runCli(['scatter', '--hostfile', hostfile, '--prompts', await prompts(9), '--ca-file', ca.caFile, '--out', out], { env });
    assert.equal(r.code, 0, r.stderr);
    const rows = jsonLines(await readFile(out, 'utf8'));
    assert.deepEqual(rows.map((row) => row.text), Array.from({ length: 9 }, (_, i) => `completion: prompt ${i + 1}`));
    assert.deepEqual(rows.map((row) => row.endpoint), [0, 1, 2, 0, 1, 2, 0, 1, 2].map((i) => [gateway.baseUrl, ...plain.endpoints][i]));
    assert.match(r.stderr, new RegExp(`^warning: batches skip the chat template on ${gateway.baseUrl.replace(/[/.]/g, '\\$&')}: /tokenize does not render`, 'm'));
    assert.ok(gateway.seen.every((s) => s.includes(' /resource_server/sim/')), gateway.seen.join('\n'));
    const servers = JSON.parse(await readFile(`${out}.servers.json`, 'utf8'));
    assert.deepEqual(servers.map((s: { endpoint: string }) => s.endpoint), [gateway.baseUrl, ...plain.endpoints]);
    assert.deepEqual(servers.map((s: { version: string | null }) => s.version), [null, '0.31.0', '0.31.0'], 'the service has no /version; the servers say theirs');
    assert.deepEqual(servers[0].models, [{ id: 'sim-model', maxModelLen: 8192 }]);
    const health = await runCli(['health', '--hostfile', hostfile, '--ca-file', ca.caFile], { env });
    assert.equal(health.code, 0, health.stderr);
    assert.match(health.stdout, new RegExp(`^${gateway.baseUrl.replace(/[/.]/g, '\\$&')}\\s+healthy\\s+sim-model\\s+8192`, 'm'));
    for (const text of [r.stdout, r.stderr, health.stdout, health.stderr]) assert.ok(!text.includes('tok-secret-1'), 'the key is never printed');
  });

  it('leaves out a service whose certificate it cannot verify (no --ca-file), saying so; the plain servers answer everything', async () => {
    const { hostfile } = await mixed(new Set(['k']));
    const r = await runCli(['scatter', '--hostfile', hostfile, '--prompts', await prompts(4), '--quiet'], { env: { SERVICE_TOKEN: 'k' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^warning: left out 1 endpoint\(s\) that cannot be used: https:\/\/127\.0\.0\.1:\d+\/resource_server\/sim\/v1 \(TLS: UNABLE_TO_VERIFY_LEAF_SIGNATURE: .*swarm --ca-file FILE/m);
    assert.deepEqual(new Set(jsonLines(r.stdout).map((row) => row.endpoint)), new Set(plain.endpoints));
  });

  it('refuses bad input in one line, exit 2, before any request: a literal key, a missing variable, a secret: reference, a bad --ca-file, a failing key command', async () => {
    const { gateway, hostfile } = await mixed(new Set(['k']));
    const p = await prompts(2);
    const literal = await writeText(dir, 'literal.hostfile', `${plain.lines[0]}\n${gateway.baseUrl}\tkey=sk-LITERAL-KEY\n`);
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--hostfile', literal], {}, /^.*literal\.hostfile:2: key=…: a hostfile never holds a key itself .* give key=env:NAME .* or key=secret:NAME/],
      [['--hostfile', hostfile, '--ca-file', ca.caFile], {}, /^https:\/\/127\.0\.0\.1:\d+\/resource_server\/sim\/v1: key=env:SERVICE_TOKEN: the environment variable SERVICE_TOKEN is not set$/],
      [['--hostfile', await writeText(dir, 'secret.hostfile', `${gateway.baseUrl}\tkey=secret:sophia\n`)], {}, /key=secret:sophia is kept in VS Code's secret storage, which the command line cannot read: give key=env:NAME and set NAME$/],
      [['--hostfile', hostfile, '--ca-file', join(dir, 'no-such.pem')], { SERVICE_TOKEN: 'k' }, /^--ca-file .*no-such\.pem: ENOENT/],
      [['--hostfile', hostfile, '--ca-file', p], { SERVICE_TOKEN: 'k' }, /^--ca-file .*p2\.txt holds no PEM certificate/],
      [['--hostfile', plain.hostfile, '--api-key-command', `'${process.execPath}' -e 'process.exit(4)'`], {}, /^--api-key-command \(.*node\) exited 4$/],
      [['--hostfile', plain.hostfile, '--api-key-command', "echo 'open"], {}, /^--api-key-command: unclosed ' in the command$/],
      [['--hostfile', plain.hostfile, '--api-key-command', 'echo k'], { SWARM_API_KEY: 'x' }, /^give one of SWARM_API_KEY and --api-key-command/],
    ];
    const before = gateway.seen.length;
    for (const [args, env, message] of cases) {
      const r = await runCli(['scatter', '--prompts', p, '--quiet', ...args], { env });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      const lines = r.stderr.trim().split('\n');
      assert.match(lines[0]!.replace(/^error: /, ''), message);
      assert.ok(!r.stderr.includes('LITERAL'), 'a literal key is never echoed');
    }
    assert.equal(gateway.seen.length, before, 'no request was sent');
  });

  it('runs --api-key-command again when its key expires mid-run (once), and the run completes', async () => {
    const keys = new Set(['token-1']);
    const { gateway, hostfile } = await mixed(keys, '');
    const key = await tokenCommand(dir, 'rotating');
    // --no-hedge: on a loaded machine the key command's run can outlast the hedge deadline; prompts a
    // hedge moved would say nothing of whether the renewed key was sent.
    const child = spawnCli(['scatter', '--hostfile', hostfile, '--prompts', await prompts(300), '--no-batch', '--no-hedge', '--concurrency', '12', '--ca-file', ca.caFile, '--api-key-command', key.line]);
    const done = finished(child, 'swarm scatter', 60_000);
    await waitFor(() => (gateway.seen.filter((s) => s.startsWith('200 ') && s.includes('/chat/completions')).length >= 20 ? true : undefined), 30_000, 'the service answering with token-1');
    keys.clear();
    keys.add('token-2'); // token-1 expires; the site issues token-2
    const r = await done;
    assert.equal(r.code, 0, r.stderr);
    const rows = jsonLines(r.stdout);
    assert.equal(rows.filter((row) => row.ok).length, 300);
    assert.ok(rows.filter((row) => row.endpoint === gateway.baseUrl).length === 100, 'the service kept its share');
    assert.equal(await key.runs(), 2, 'the command ran at the start and once when the key expired');
    assert.ok(gateway.refusals() >= 1 && gateway.refusals() <= 12, `${gateway.refusals()} refused: the requests in flight when it expired`);
    assert.ok(!r.stderr.includes('token-'), 'keys are never printed');
  });

  it('benches a service that refuses its key mid-run: one line, its prompts go to the plain servers, no request after the refusals in flight', async () => {
    const keys = new Set(['fixed-key']);
    const { gateway, hostfile } = await mixed(keys);
    const child = spawnCli(['scatter', '--hostfile', hostfile, '--prompts', await prompts(300), '--no-batch', '--concurrency', '12', '--ca-file', ca.caFile], { env: { SERVICE_TOKEN: 'fixed-key' } });
    const done = finished(child, 'swarm scatter', 60_000);
    await waitFor(() => (gateway.seen.filter((s) => s.startsWith('200 ') && s.includes('/chat/completions')).length >= 20 ? true : undefined), 30_000, 'the service answering');
    keys.clear(); // revoked
    const r = await done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(jsonLines(r.stdout).filter((row) => row.ok).length, 300);
    // Once as the endpoint's status (the progress view's line), once as the warning of its failover.
    assert.match(r.stderr, /^endpoint https:\/\/\S+ down: HTTP 401: access token expired or invalid \(the key of key=env:SERVICE_TOKEN was refused; /m);
    const said = r.stderr.split('\n').filter((l) => l.startsWith('warning:') && l.includes('was refused'));
    assert.equal(said.length, 1, r.stderr);
    assert.match(said[0]!, new RegExp(`^warning: ${gateway.baseUrl.replace(/[/.]/g, '\\$&')}: HTTP 401: access token expired or invalid \\(the key of key=env:SERVICE_TOKEN was refused; .* is sent nothing more\\); its unanswered prompts go to other endpoints$`));
    assert.ok(gateway.refusals() >= 1 && gateway.refusals() <= 12, `${gateway.refusals()} refused: only the requests already in flight`);
  });

  it('mixes a TLS service with servers tunnelled through one SSH login (--via): the login carries only the compute nodes', { skip: haveSshd ? false : 'openssh-server is not installed (scripts/install-test-deps.sh)' }, async () => {
    const sshd = new TestSshd();
    await sshd.start();
    try {
      const { gateway, hostfile } = await mixed(new Set(['k']));
      const r = await runCli(['scatter', '--hostfile', hostfile, '--prompts', await prompts(6), '--via', sshd.via, '--ssh-config', sshd.clientConfig, '--tunnel-mode', 'forward', '--ca-file', ca.caFile], { env: { SERVICE_TOKEN: 'k' }, timeoutMs: 30_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^tunnel: 2 endpoint\(s\) through .* \(forward\)$/m);
      assert.deepEqual(jsonLines(r.stdout).map((row) => row.endpoint), [gateway.baseUrl, ...plain.endpoints, gateway.baseUrl, ...plain.endpoints]);
    } finally {
      await sshd.stop();
    }
  });
});

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { checkHealth, endpointId, hostfileFromText, scatterGather, type Endpoint } from '../src/core/index.ts';
import { pathUnder } from '../src/core/http/base-url.ts';
import { fixedKey } from '../src/core/http/credential.ts';
import { KeyCommand, KeyCommandError, splitCommandLine } from '../src/core/process/key-command.ts';
import { Fixture, prompts } from './helpers/swarm.ts';

/** A run's report and every warning it gave. */
async function run(...args: Parameters<typeof scatterGather>) {
  const r = scatterGather(...args);
  const warnings: string[] = [];
  r.on('warning', (w) => warnings.push(w));
  return { ...(await r.done), warnings };
}
import { makeTestCa, tlsGateway, type Gateway, type TestCa } from './helpers/tls-gateway.ts';
import { tokenCommand } from './helpers/token-command.ts';

const fx = new Fixture();
let dir: string;
let ca: TestCa;
let caPem: string;
const gateways: Gateway[] = [];
let tokens = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'swarm-services-'));
  ca = makeTestCa(dir);
  caPem = await readFile(ca.caFile, 'utf8');
});
after(() => rm(dir, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
  await fx.close();
});

/** One sim server behind a TLS gateway taking `keys`, and one plain sim server: the hostfile a user would write. */
async function mixedSwarm(keys: Set<string>, options: { apiOnly?: boolean; sim?: Parameters<Fixture['sim']>[1] } = {}) {
  const sim = await fx.sim(2, options.sim);
  const [behind, plain] = sim.endpoints as [Endpoint, Endpoint];
  const gateway = await tlsGateway({ target: `http://${endpointId(behind)}`, ca, keys, apiOnly: options.apiOnly ?? false });
  gateways.push(gateway);
  const { endpoints } = hostfileFromText(`${gateway.baseUrl}\tkey=env:SERVICE_KEY\n${plain.host}\t${plain.port}\n`, 'mixed.hosts');
  return { sim, gateway, endpoints, service: endpoints[0]!, plain: endpoints[1]! };
}

describe('base-URL paths', () => {
  it('puts the API under the base URL and the server routes under what is left without /v1', () => {
    assert.equal(pathUnder('/resource_server/sophia/vllm/v1', '/v1/completions'), '/resource_server/sophia/vllm/v1/completions');
    assert.equal(pathUnder('/resource_server/sophia/vllm/v1', '/tokenize'), '/resource_server/sophia/vllm/tokenize');
    assert.equal(pathUnder('/openai', '/v1/models'), '/openai/models');
    assert.equal(pathUnder('/openai', '/health'), '/openai/health');
    assert.equal(pathUnder('', '/v1/models'), '/models');
  });
});

describe('a TLS service and plain servers in one pool', () => {
  it('runs batched, templated, streamed and individual over both, every request under the base path, the certificate verified against --ca-file', async () => {
    const { sim, gateway, endpoints, service } = await mixedSwarm(new Set(['k1']));
    const pool = fx.pool(endpoints, { caCertificates: caPem, credentials: new Map([[endpointId(service), fixedKey('k1', 'key=env:SERVICE_KEY')]]) });
    for (const options of [{ batch: true }, { batch: true, template: 'auto' as const }, { batch: true, stream: true }, { batch: false }]) {
      const report = await run(pool, prompts(8), { maxTokens: 20, ...options });
      assert.equal(report.summary.ok, 8, JSON.stringify({ options, error: report.error, warnings: report.warnings }));
      assert.deepEqual(report.results.map((r) => r.endpoint), prompts(8).map((_, i) => (i % 2 ? endpointId(endpoints[1]!) : gateway.baseUrl)));
    }
    assert.ok(gateway.seen.length > 0);
    assert.ok(gateway.seen.every((s) => / \/resource_server\/sim\//.test(s)), gateway.seen.join('\n'));
    assert.equal(gateway.refusals(), 0);
    assert.ok(sim.servers[0]!.stats().generationRequests > 0, 'the server behind the gateway generated');
    const health = await checkHealth(pool);
    assert.deepEqual(health.map((h) => h.status), ['up', 'up']);
  });

  it('degrades where a service serves only the API: no /health, /tokenize, /metrics or /version', async () => {
    const { gateway, endpoints, service } = await mixedSwarm(new Set(['k1']), { apiOnly: true, sim: { vllmVersion: '0.15' } });
    const pool = fx.pool(endpoints, { caCertificates: caPem, credentials: new Map([[endpointId(service), fixedKey('k1', 'key=env:SERVICE_KEY')]]) });
    const report = await run(pool, prompts(6), { maxTokens: 20, batch: true, template: 'auto' });
    assert.equal(report.summary.ok, 6, report.error ?? '');
    assert.ok(report.warnings.some((w) => w.includes(`batches skip the chat template on ${gateway.baseUrl}`)), report.warnings.join('\n'));
    // The service (asked first) cannot render; the plain server still renders its own batches.
    assert.deepEqual(report.results.map((r) => r.template), ['none', 'skeleton', 'none', 'skeleton', 'none', 'skeleton']);
    const [health] = await checkHealth(pool);
    assert.equal(health!.status, 'up', 'no /health: /v1/models says');
    assert.equal(health!.healthStatus, null);
    assert.deepEqual(await pool.serverVersions(), ['0.15.0']);
  });

  it('leaves out a service whose certificate it cannot verify, saying why; the plain server takes every prompt', async () => {
    const { endpoints, service } = await mixedSwarm(new Set(['k1']));
    const pool = fx.pool(endpoints, { credentials: new Map([[endpointId(service), fixedKey('k1', 'key=env:SERVICE_KEY')]]) });
    const report = await run(pool, prompts(4), { maxTokens: 20 });
    assert.equal(report.summary.ok, 4);
    assert.ok(report.warnings.some((w) => /left out 1 endpoint\(s\) that cannot be used: https:\/\/127\.0\.0\.1:\d+\/resource_server\/sim\/v1 \(TLS: UNABLE_TO_VERIFY_LEAF_SIGNATURE: .*--ca-file/.test(w)), report.warnings.join('\n'));
    assert.ok(report.results.every((r) => r.endpoint === endpointId(endpoints[1]!)));
  });
});

describe('keys refused, expired and fetched again', () => {
  it('benches a service that refuses its key mid-run, never asking it again; its prompts go to the others', async () => {
    const keys = new Set(['k1']);
    const { gateway, endpoints, service } = await mixedSwarm(keys);
    const pool = fx.pool(endpoints, { caCertificates: caPem, credentials: new Map([[endpointId(service), fixedKey('k1', 'key=env:SERVICE_KEY')]]) });
    assert.equal((await run(pool, prompts(4), { maxTokens: 20 })).summary.ok, 4);
    keys.delete('k1');
    const refused = await run(pool, prompts(8), { maxTokens: 20 });
    assert.equal(refused.summary.ok, 8, 'every prompt answered by the plain server');
    assert.ok(refused.warnings.some((w) => w.startsWith(`${gateway.baseUrl}: HTTP 401: access token expired or invalid (the key of key=env:SERVICE_KEY was refused; ${gateway.baseUrl} is sent nothing more)`)), refused.warnings.join('\n'));
    assert.equal(gateway.refusals(), 1);
    assert.equal(pool.endpoints[0]!.status, 'down');
    const before = gateway.seen.length;
    const again = await run(pool, prompts(8), { maxTokens: 20, batch: false });
    assert.equal(again.summary.ok, 8);
    const [health] = await checkHealth(pool);
    assert.equal(health!.denied, 401);
    assert.equal(gateway.seen.length, before, 'not one more request: a refused key is never retried into a lock-out');
  });

  it('runs the key command again when a key that worked expires — once for every request refused at once — and fails when the fresh key is refused too', async () => {
    const keys = new Set(['token-1']);
    const { gateway, endpoints, service } = await mixedSwarm(keys, { sim: { ttftMs: 30 } });
    const command = await tokenCommand(dir, `token-${tokens++}`);
    // No hedging: on a loaded machine the key command's run can outlast the hedge deadline, and the
    // prompts a hedge moves would say nothing of whether the renewed key was sent.
    const pool = fx.pool(endpoints, { caCertificates: caPem, hedge: false, credentials: new Map([[endpointId(service), await KeyCommand.start(command.argv)]]) });
    assert.equal((await run(pool, prompts(20), { maxTokens: 5, batch: false })).summary.ok, 20);
    assert.equal(await command.runs(), 1);

    keys.clear();
    keys.add('token-2'); // token-1 expired; the site now issues token-2
    const renewed = await run(pool, prompts(20), { maxTokens: 5, batch: false });
    assert.equal(renewed.summary.ok, 20);
    assert.equal(await command.runs(), 2, 'one run of the command for all the requests refused together');
    assert.ok(gateway.refusals() >= 1);
    assert.ok(renewed.results.filter((_, i) => i % 2 === 0).every((r) => r.endpoint === gateway.baseUrl), 'the service kept its prompts');

    keys.clear(); // token-2 expires and the site takes no new one
    const refusalsBefore = gateway.refusals();
    const refused = await run(pool, prompts(20), { maxTokens: 5, batch: false });
    assert.equal(refused.summary.ok, 20, 'the plain server took the service’s prompts');
    assert.equal(await command.runs(), 3, 'run again once, then the refusal stands');
    assert.ok(refused.warnings.some((w) => w.includes('the key of --api-key-command was refused, also when run again')), refused.warnings.join('\n'));
    const seen = gateway.seen.length;
    await run(pool, prompts(20), { maxTokens: 5, batch: false });
    assert.equal(gateway.seen.length, seen);
    assert.equal(await command.runs(), 3);
    assert.ok(gateway.refusals() - refusalsBefore <= 20);
  });

  it('does not run the command again for a key that never worked: a wrong key is no expiry', async () => {
    const { gateway, endpoints, service } = await mixedSwarm(new Set(['something-else']));
    const command = await tokenCommand(dir, `token-${tokens++}`);
    const pool = fx.pool(endpoints, { caCertificates: caPem, credentials: new Map([[endpointId(service), await KeyCommand.start(command.argv)]]) });
    const report = await run(pool, prompts(4), { maxTokens: 5 });
    assert.equal(report.summary.ok, 4);
    assert.ok(report.warnings.some((w) => w.includes(`${gateway.baseUrl} (HTTP 401: access token expired or invalid (the key of --api-key-command was refused;`)), report.warnings.join('\n'));
    assert.equal(await command.runs(), 1);
    assert.equal(gateway.refusals(), 1);
  });

  it('says why a key command gave no key, without showing what it printed', async () => {
    const fails = join(dir, 'fails.mjs');
    await writeFile(fails, "console.error('globus: refresh token expired; run the authenticate step'); process.exit(3);\n");
    await assert.rejects(KeyCommand.start([process.execPath, fails]), (err: Error) => err instanceof KeyCommandError && /--api-key-command \(.*node\) exited 3: globus: refresh token expired; run the authenticate step$/.test(err.message));
    const noisy = join(dir, 'noisy.mjs');
    await writeFile(noisy, "console.log('Bearer sk-LEAKED with words');\n");
    await assert.rejects(KeyCommand.start([process.execPath, noisy]), (err: Error) => /printed no key: its first line of output must be the key alone$/.test(err.message) && !err.message.includes('LEAKED'));
    await assert.rejects(KeyCommand.start([join(dir, 'missing-command')]), /exited 127: cannot run .*missing-command/);
  });

  it('splits a command line as a shell would, without one', () => {
    assert.deepEqual(splitCommandLine(`python3 'inference auth.py' get_access_token --scope "a b" c\\ d`), ['python3', 'inference auth.py', 'get_access_token', '--scope', 'a b', 'c d']);
    assert.deepEqual(splitCommandLine('echo $HOME ~ *'), ['echo', '$HOME', '~', '*']);
    assert.throws(() => splitCommandLine(`echo 'open`), /unclosed ' in the command/);
    assert.throws(() => splitCommandLine('  '), /the command is empty/);
  });
});

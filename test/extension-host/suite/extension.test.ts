import * as assert from 'node:assert/strict';
import { createServer } from 'node:net';
import * as vscode from 'vscode';
import type { Endpoint } from '../../../src/core/endpoints/endpoint.ts';
import { startSimCluster, type SimCluster } from '../../../src/sim/cluster.ts';
import type { SimOptions } from '../../../src/sim/options.ts';
import { writeHostfile } from '../../../src/core/hostfile/write.ts';
import type { SwarmLabApi } from '../../../src/extension/extension.ts';
import type { ScatterOutcome } from '../../../src/extension/commands/run.ts';
import { until as poll } from '../until.ts';
import { patience } from '../../helpers/patience.ts';

const EXTENSION_ID = 'swarm-lab.swarm-lab';
const TITLES = [
  'Connect to Hostfile',
  'Disconnect',
  'Scatter Prompts',
  'Tree Reduce',
  'Compare Batched vs Individual',
  'Start Local Simulator',
  'Set API Key',
  'Show Log',
];

let api: SwarmLabApi;
const clusters: SimCluster[] = [];

async function sim(count: number, options: Partial<SimOptions> = {}): Promise<SimCluster> {
  const cluster = await startSimCluster(count, { ttftMs: 0, tpotMs: 0, requestOverheadMs: 0, ...options });
  clusters.push(cluster);
  return cluster;
}

function workspaceFile(name: string): vscode.Uri {
  return vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, name);
}

async function writeFile(name: string, text: string): Promise<vscode.Uri> {
  const uri = workspaceFile(name);
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(text));
  return uri;
}

async function connectTo(cluster: SimCluster | SimCluster[], name = 'test.hostfile'): Promise<vscode.Uri> {
  const endpoints = (Array.isArray(cluster) ? cluster : [cluster]).flatMap((c) => c.endpoints);
  const uri = await writeFile(name, writeHostfile(endpoints));
  assert.equal(await vscode.commands.executeCommand('swarmLab.connect', uri), true);
  return uri;
}

/** A loopback port nothing listens on (taken from the OS, then let go). */
async function closedPort(): Promise<Endpoint> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return { host: '127.0.0.1', port, tags: {} };
}

async function connectToEndpoints(endpoints: Endpoint[], name = 'test.hostfile'): Promise<void> {
  const uri = await writeFile(name, writeHostfile(endpoints));
  assert.equal(await vscode.commands.executeCommand('swarmLab.connect', uri), true);
}

const statusOf = (id: string) => api.snapshot().endpoints.find((e) => e.id === id);
const idOf = (e: Endpoint) => `${e.host}:${e.port}`;

async function readLines(uri: vscode.Uri): Promise<Array<Record<string, any>>> {
  const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  return text.trim().split('\n').map((l) => JSON.parse(l));
}

async function until(probe: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  await poll(probe, what, timeoutMs);
}

describe('Swarm Lab in the extension host', function () {
  this.timeout(patience(30_000));

  before(async () => {
    const ext = vscode.extensions.getExtension<SwarmLabApi>(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is installed`);
    api = await ext.activate();
  });

  afterEach(async () => {
    await vscode.commands.executeCommand('swarmLab.disconnect');
    await vscode.commands.executeCommand('swarmLab.showAllEndpoints');
    await vscode.commands.executeCommand('swarmLab.sortEndpoints', 'hostfile');
    await vscode.workspace.getConfiguration('swarmLab').update('batching', undefined, vscode.ConfigurationTarget.Workspace);
    await vscode.commands.executeCommand('swarmLab.setApiKey', '');
    await Promise.all(clusters.splice(0).map((c) => c.close()));
  });

  it('registers every command with its fixed title', async () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: Array<{ command: string; title: string; category: string }> } };
    const titled = pkg.contributes.commands.map((c) => `${c.category}: ${c.title}`);
    for (const title of TITLES) assert.ok(titled.includes(`Swarm: ${title}`), title);
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const c of pkg.contributes.commands) assert.ok(registered.has(c.command), c.command);
  });

  it('connects to a simulator hostfile: every endpoint healthy, with model and context, and the status bar counts them', async () => {
    const cluster = await sim(3, { model: 'sim-chat', maxModelLen: 4096 });
    await connectTo(cluster);
    const snap = api.snapshot();
    assert.equal(snap.connected, true);
    assert.deepEqual(snap.endpoints.map((e) => [e.id, e.status, e.model, e.maxModelLen]), cluster.endpoints.map((e) => [`${e.host}:${e.port}`, 'up', 'sim-chat', 4096]));
    assert.match(snap.statusBar.text, /Swarm 3\/3/);
  });

  it('writes one result per prompt to .swarm/runs, in input order, batched and individual', async () => {
    const cluster = await sim(3);
    await connectTo(cluster);
    const prompts = Array.from({ length: 25 }, (_, i) => `q${i}`);
    for (const batch of [true, false]) {
      const before = cluster.servers.map((s) => s.stats().generationRequests);
      const outcome = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts, batch, open: false });
      assert.ok(outcome.resultsUri.fsPath.includes(`${'.swarm'}/runs/`), outcome.resultsUri.fsPath);
      const lines = await readLines(outcome.resultsUri);
      assert.deepEqual(lines.map((l) => l.index), prompts.map((_, i) => i));
      assert.deepEqual(lines.map((l) => l.text), prompts.map((p) => `completion: ${p}`));
      assert.deepEqual(lines.map((l) => l.endpoint), prompts.map((_, i) => `127.0.0.1:${cluster.endpoints[i % 3]!.port}`));
      const sent = cluster.servers.map((s, i) => s.stats().generationRequests - before[i]!);
      assert.deepEqual(sent, batch ? [1, 1, 1] : [9, 8, 8]);
    }
  });

  it('cancel keeps the finished results and marks the rest cancelled', async () => {
    const fast = await sim(1);
    const stuck = await sim(1, { hang: true });
    await connectTo([fast, stuck]);
    const prompts = Array.from({ length: 10 }, (_, i) => `c${i}`);
    const pending = vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts, batch: false, open: false });
    await until(() => api.snapshot().running && /^\$\(sync~spin\) Swarm 5\/10/.test(api.snapshot().statusBar.text), 'the fast half to finish');
    assert.equal(api.snapshot().statusBar.command, 'swarmLab.cancelRun', 'clicking the status bar cancels');
    await vscode.commands.executeCommand('swarmLab.cancelRun');
    const outcome = await pending;
    assert.equal(outcome.cancelled, true);
    const lines = await readLines(outcome.resultsUri);
    assert.deepEqual(lines.map((l) => l.status), prompts.map((_, i) => (i % 2 ? 'cancelled' : 'ok')));
  });

  it('follows settings: swarmLab.batching off sends one chat request per prompt', async () => {
    const cluster = await sim(2);
    await connectTo(cluster);
    await vscode.workspace.getConfiguration('swarmLab').update('batching', false, vscode.ConfigurationTarget.Workspace);
    const outcome = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts: ['a', 'b', 'c', 'd'], open: false });
    assert.equal(outcome.summary.mode, 'individual');
    assert.deepEqual(cluster.servers.map((s) => s.stats().httpRequests['POST /v1/chat/completions 200']), [2, 2]);
  });

  it('sends the API key from SecretStorage, and keeps it out of settings', async () => {
    const cluster = await sim(2, { apiKey: 'sekret-123' });
    await vscode.commands.executeCommand('swarmLab.setApiKey', 'sekret-123');
    await connectTo(cluster);
    const ok = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts: ['a', 'b'], open: false });
    assert.equal(ok.summary.ok, 2);
    assert.ok(!JSON.stringify(vscode.workspace.getConfiguration('swarmLab')).includes('sekret-123'));
    await vscode.commands.executeCommand('swarmLab.setApiKey', '');
    const denied = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts: ['a', 'b'], open: false });
    assert.equal(denied.summary.ok, 0);
  });

  it('a refused port is down, not booting: its row, the summary row and the status bar say so', async () => {
    const live = await sim(2);
    const gone = await closedPort();
    await connectToEndpoints([live.endpoints[0]!, gone, live.endpoints[1]!]);
    const row = statusOf(idOf(gone))!;
    assert.equal(row.status, 'down');
    assert.match(row.error ?? '', /ECONNREFUSED/);
    const snap = api.snapshot();
    assert.deepEqual(snap.tree.rows.map((r) => r.label), ['2 healthy · 0 degraded · 1 down', ...[live.endpoints[0]!, gone, live.endpoints[1]!].map(idOf)]);
    assert.match(snap.tree.rows[2]!.description, /^down/);
    assert.match(snap.statusBar.text, /Swarm 2\/3/);
    assert.match(snap.statusBar.tooltip, new RegExp(`Not healthy: ${idOf(gone)} \\(down\\)`));
    // A run leaves it out, and it stays down (no spinner, no "booting").
    const outcome = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts: ['a', 'b', 'c'], batch: false, open: false });
    assert.equal(outcome.summary.ok, 3);
    assert.equal(statusOf(idOf(gone))!.status, 'down');
  });

  it('an endpoint answering HTTP 500 turns degraded with its failure rate as a run meets it; a healthy /health does not clear it', async () => {
    const good = await sim(1);
    const sick = await sim(1, { faultRate: 1, faultStatus: 500 });
    await connectTo([good, sick]);
    const sickId = idOf(sick.endpoints[0]!);
    assert.equal(statusOf(sickId)!.status, 'up', '/health answers 200: healthy until a run says otherwise');
    const outcome = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts: ['a', 'b', 'c', 'd'], batch: false, open: false });
    assert.equal(outcome.summary.ok, 4, 'its prompts failed over');
    await until(() => statusOf(sickId)?.status === 'degraded', 'the 500s to show');
    const row = statusOf(sickId)!;
    assert.equal(row.answered, 0);
    assert.ok(row.failures >= 1, `failures: ${row.failures}`);
    assert.match(row.error ?? '', /500|Simulated fault/);
    await until(() => api.snapshot().tree.rows.some((r) => r.label === sickId && /^degraded · 100 % failed/.test(r.description)), 'the failure rate in the tree');
    assert.equal(api.snapshot().tree.rows[0]!.label, '1 healthy · 1 degraded · 0 down');
    await vscode.commands.executeCommand('swarmLab.refresh');
    assert.equal(statusOf(sickId)!.status, 'degraded', 'a sick vLLM still answers /health: only a request that goes through clears it');
  });

  it('an endpoint whose /health answers 500 is degraded after the health check', async () => {
    const good = await sim(1);
    const sick = await sim(1, { healthStatus: 500 });
    await connectTo([good, sick]);
    const row = statusOf(idOf(sick.endpoints[0]!))!;
    assert.equal(row.status, 'degraded');
    assert.match(row.error ?? '', /\/health answered 500/);
    sick.servers[0]!.setFaults({ healthStatus: 200 });
    await vscode.commands.executeCommand('swarmLab.refresh');
    assert.equal(statusOf(idOf(sick.endpoints[0]!))!.status, 'up', 'what a health check found, a health check clears');
  });

  it('filters the tree to the endpoints not healthy and back, and sorts it by name, status or failure rate', async () => {
    const live = await sim(2);
    const gone = await closedPort();
    const hostfile = [live.endpoints[1]!, gone, live.endpoints[0]!];
    await connectToEndpoints(hostfile);
    const labels = () => api.snapshot().tree.rows.map((r) => r.label);
    assert.deepEqual(labels(), ['2 healthy · 0 degraded · 1 down', ...hostfile.map(idOf)]);
    await vscode.commands.executeCommand('swarmLab.showUnhealthyOnly');
    assert.deepEqual(labels(), ['2 healthy · 0 degraded · 1 down', idOf(gone)], 'the summary still counts all');
    assert.equal(api.snapshot().tree.rows[0]!.description, 'showing 1 not healthy');
    await vscode.commands.executeCommand('swarmLab.showAllEndpoints');
    assert.equal(labels().length, 4);
    await vscode.commands.executeCommand('swarmLab.sortEndpoints', 'status');
    assert.equal(labels()[1], idOf(gone), 'worst first');
    await vscode.commands.executeCommand('swarmLab.sortEndpoints', 'name');
    const byName = hostfile.map(idOf).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    assert.deepEqual(labels().slice(1), byName);
    assert.equal(api.snapshot().tree.sort, 'name');
  });

  it('Wait for Servers shows a refused endpoint as booting until it comes up', async () => {
    const late = await closedPort();
    await connectToEndpoints([late]);
    assert.equal(statusOf(idOf(late))!.status, 'down');
    const waited = vscode.commands.executeCommand<number>('swarmLab.waitForServers', { intervalSeconds: 0.05 });
    await until(() => statusOf(idOf(late))?.status === 'booting', 'booting while waiting');
    clusters.push(await startSimCluster(1, { ttftMs: 0, tpotMs: 0 }, late.port));
    assert.equal(await waited, 1);
    assert.equal(statusOf(idOf(late))!.status, 'up');
    assert.match(api.snapshot().statusBar.text, /Swarm 1\/1/);
  });

  it('a run with failed prompts leaves a mark on the status bar until it is clicked', async () => {
    const cluster = await sim(1, { faultRate: 1 });
    await connectTo(cluster);
    const outcome = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts: ['a'], batch: false, open: false });
    assert.equal(outcome.summary.failed, 1);
    await until(() => / · [\d.]+ s \$\(error\)$/.test(api.snapshot().statusBar.text), 'the error mark');
    assert.match(api.snapshot().statusBar.text, /\$\(server-environment\) Swarm 0\/1 /, 'the endpoint that failed it is not counted healthy');
    assert.equal(api.snapshot().statusBar.command, 'swarmLab.showSwarm');
    await vscode.commands.executeCommand('swarmLab.showSwarm');
    await until(() => !api.snapshot().statusBar.text.includes('$(error)'), 'the mark to go on click');
  });

  it('refuses a bad hostfile, naming file and line, and stays disconnected', async () => {
    const uri = await writeFile('bad.hostfile', 'good-host\t8000\nbad_host\t8000\nx\t0\n');
    assert.equal(await vscode.commands.executeCommand('swarmLab.connect', uri), false);
    assert.equal(api.snapshot().connected, false);
  });

  it('tree-reduces over the chat path and returns every level', async () => {
    const cluster = await sim(2);
    await connectTo(cluster);
    const outcome = await vscode.commands.executeCommand<{ text: string; levels: Array<{ texts: string[] }> }>('swarmLab.treeReduce', {
      prompt: 'leaf {item}',
      items: ['1', '2', '3'],
      reducePrompt: 'merge: {responses}',
      fanin: 2,
    });
    assert.deepEqual(outcome.levels.map((l) => l.texts.length), [3, 2, 1]);
    assert.match(outcome.text, /leaf 1[\s\S]*leaf 2[\s\S]*leaf 3/);
  });

  it('starts a local simulator, writes its hostfile to .swarm/ and connects to it', async () => {
    assert.equal(await vscode.commands.executeCommand('swarmLab.startSimulator', { count: 2 }), true);
    const snap = api.snapshot();
    assert.equal(snap.endpoints.length, 2);
    assert.ok(snap.endpoints.every((e) => e.status === 'up'));
    const hostfile = new TextDecoder().decode(await vscode.workspace.fs.readFile(workspaceFile('.swarm/simulator.hostfile')));
    assert.equal(hostfile.trim().split('\n').length, 2);
    await vscode.commands.executeCommand('swarmLab.disconnect');
    assert.equal(api.snapshot().connected, false);
  });
});

import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { startSimCluster, type SimCluster } from '../../../src/sim/cluster.ts';
import type { SwarmLabApi } from '../../../src/extension/extension.ts';
import type { ScatterOutcome } from '../../../src/extension/commands/run.ts';
import { tlsGateway, type Gateway } from '../../helpers/tls-gateway.ts';
import { patience } from '../../helpers/patience.ts';

/**
 * A service at a base URL beside a plain server in one hostfile, its key kept in SecretStorage under
 * the name its line gives (`key=secret:svc`). Plain http here: the extension host trusts only the CAs
 * it started with (NODE_EXTRA_CA_CERTS); TLS itself is tested under node (service-endpoints, cli-services).
 */
describe('base-URL services in the extension host', function () {
  this.timeout(patience(30_000));
  let api: SwarmLabApi;
  let cluster: SimCluster | undefined;
  let gateway: Gateway | undefined;

  before(async () => {
    api = await vscode.extensions.getExtension<SwarmLabApi>('swarm-lab.swarm-lab')!.activate();
  });

  afterEach(async () => {
    await vscode.commands.executeCommand('swarmLab.disconnect');
    await vscode.commands.executeCommand('swarmLab.setApiKey', '', 'svc');
    await gateway?.close();
    await cluster?.close();
  });

  it('sends the named secret to the service under its base path; a refused key benches it, never asked again', async () => {
    cluster = await startSimCluster(2, { ttftMs: 0, tpotMs: 0, requestOverheadMs: 0 });
    const [behind, plain] = cluster.endpoints;
    gateway = await tlsGateway({ target: `http://${behind!.host}:${behind!.port}`, keys: new Set(['svc-key']), apiOnly: true });
    await vscode.commands.executeCommand('swarmLab.setApiKey', 'svc-key', 'svc');
    const uri = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, 'services.hostfile');
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(`${gateway.baseUrl}\tkey=secret:svc\n${plain!.host}\t${plain!.port}\n`));
    assert.equal(await vscode.commands.executeCommand('swarmLab.connect', uri), true);
    assert.deepEqual(api.snapshot().endpoints.map((e) => [e.id, e.status]), [[gateway.baseUrl, 'up'], [`${plain!.host}:${plain!.port}`, 'up']]);

    const ok = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts: ['a', 'b', 'c', 'd'], open: false });
    assert.equal(ok.summary.ok, 4);
    assert.ok(gateway.seen.some((s) => s === '200 /resource_server/sim/v1/completions'), gateway.seen.join('\n'));

    // A wrong key: the service refuses it once, is benched, and the plain server answers everything.
    await vscode.commands.executeCommand('swarmLab.setApiKey', 'wrong-key', 'svc');
    const refused = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts: ['a', 'b', 'c', 'd'], open: false });
    assert.equal(refused.summary.ok, 4);
    assert.equal(gateway.refusals(), 1);
    const row = api.snapshot().endpoints[0]!;
    assert.equal(row.status, 'down');
    assert.match(row.error ?? '', /HTTP 401: access token expired or invalid \(the key of key=secret:svc was refused/);
    const seen = gateway.seen.length;
    await vscode.commands.executeCommand('swarmLab.refresh');
    assert.equal(gateway.seen.length, seen, 'a health check does not ask it again');
  });
});

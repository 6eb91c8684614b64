import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { writeHostfile } from '../../../src/core/hostfile/write.ts';
import { startSimCluster, type SimCluster } from '../../../src/sim/cluster.ts';
import type { SwarmLabApi } from '../../../src/extension/extension.ts';
import type { ScatterOutcome } from '../../../src/extension/commands/run.ts';
import { until } from '../until.ts';
import { patience } from '../../helpers/patience.ts';

const DRAINED = 'drained: not sent (the run was drained; --resume sends it)';

/** The panel's Drain (its `drain` message) drains the run going, as the palette's Drain Run does. */
describe('the panel\'s Drain', function () {
  this.timeout(patience(60_000));
  let api: SwarmLabApi;
  let cluster: SimCluster;

  before(async function () {
    if (!process.env.SWARM_TEST_SSHD_LOG) return this.skip(); // run by test/vscode-launched-jobs.test.ts
    api = await vscode.extensions.getExtension<SwarmLabApi>('swarm-lab.swarm-lab')!.activate();
    cluster = await startSimCluster(2, { ttftMs: 30, tpotMs: 0, requestOverheadMs: 0 });
  });

  after(async () => {
    await vscode.commands.executeCommand('swarmLab.disconnect');
    await cluster?.close();
  });

  it('what is in flight finishes, nothing new is sent, the rest is kept as drained; the record says drained', async () => {
    const uri = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, 'drain.hostfile');
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(writeHostfile(cluster.endpoints)));
    assert.equal(await vscode.commands.executeCommand('swarmLab.connect', uri), true);
    const prompts = Array.from({ length: 2_000 }, (_, i) => `prompt ${i + 1}`);
    const going = vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts, batch: false, open: false });
    await until(() => api.snapshot().running && (api.snapshot().statusBar.text.match(/Swarm (\d+)\//)?.[1] ?? '0') !== '0', 'the run to start answering', 30_000);
    await api.panel.receive({ type: 'drain' });
    const outcome = await going;
    assert.equal(outcome.cancelled, false);
    const rows = new TextDecoder().decode(await vscode.workspace.fs.readFile(outcome.resultsUri)).trim().split('\n').map((l) => JSON.parse(l) as { index: number; ok: boolean; status: string; error: string | null });
    assert.deepEqual(rows.map((r) => r.index), [...Array(2_000).keys()]);
    const ok = rows.filter((r) => r.ok).length;
    const drained = rows.filter((r) => r.status === 'cancelled' && r.error === DRAINED).length;
    assert.ok(ok > 0 && drained > 0 && ok + drained === 2_000, `${ok} ok, ${drained} drained`);
    const record = JSON.parse(new TextDecoder().decode(await vscode.workspace.fs.readFile(outcome.resultsUri.with({ path: outcome.resultsUri.path.replace(/\.jsonl$/, '.run.json') })))) as { record: { drained?: boolean } };
    assert.equal(record.record.drained, true);
  });
});

import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { SwarmLabApi } from '../../../src/extension/extension.ts';
import type { LaunchArgs } from '../../../src/extension/commands/launch.ts';
import type { ScatterOutcome } from '../../../src/extension/commands/run.ts';
import { step } from './steps.ts';
import { patience } from '../../helpers/patience.ts';

/**
 * A run on a launched job that reaches its walltime with no drain, in the real extension host on a
 * real Slurm (through the sshd test/vscode-launched-jobs.test.ts starts): the run stops just before the
 * scheduler ends the servers; what was in flight and unsent is cancelled by walltime, none failed.
 */
const PORT_BASE = Number(process.env.SWARM_TEST_PORT_BASE);
const NAME = 'walltime-stop';

describe('a walltime reached mid-run (real Slurm)', function () {
  this.timeout(patience(300_000));
  let api: SwarmLabApi;

  before(async function () {
    if (!process.env.SWARM_TEST_SSHD_LOG) return this.skip(); // run by test/vscode-launched-jobs.test.ts
    api = await vscode.extensions.getExtension<SwarmLabApi>('swarm-lab.swarm-lab')!.activate();
  });

  after(async () => {
    await vscode.commands.executeCommand('swarmLab.disconnect');
  });

  it('a run of 10,000 prompts on a one-minute job: the ones finished are kept, the rest cancelled by walltime, in input order; nothing failed', async () => {
    const args: LaunchArgs = { jobName: NAME, form: { scheduler: 'slurm', engine: 'sim', nodes: 1, serversPerNode: 2, walltime: '1', portBase: PORT_BASE + 2 } };
    step('launch');
    const record = await vscode.commands.executeCommand<{ id: string } | undefined>('swarmLab.launch', args);
    assert.ok(record, 'the launch came to ready');
    step(`job ${record.id} ready, ${Math.round(api.snapshot().job?.walltimeLeft ?? 0)} s of walltime left; scatter`);
    assert.ok((api.snapshot().job?.walltimeLeft ?? 0) > 10, 'the job has its walltime left to run in');
    // Two requests at a time (the suite's settings), one prompt each: far longer than the minute.
    const prompts = Array.from({ length: 10_000 }, (_, i) => `prompt ${i + 1}`);
    const outcome = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts, batch: false, open: false });
    step(`scatter ended: ${outcome.summary.ok} ok, ${outcome.summary.cancelled} cancelled, ${outcome.summary.failed} failed`);
    assert.equal(outcome.cancelled, true);
    const rows = new TextDecoder()
      .decode(await vscode.workspace.fs.readFile(outcome.resultsUri))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { index: number; status: string; error: string | null; ok: boolean });
    assert.deepEqual(rows.map((r) => r.index), [...Array(10_000).keys()]);
    const reason = `cancelled by walltime: job ${record.id} reached its walltime (--resume finishes it on the next job)`;
    const ok = rows.filter((r) => r.ok).length;
    const stopped = rows.filter((r) => r.status === 'cancelled' && r.error === reason).length;
    assert.ok(ok > 0 && stopped > 0 && ok + stopped === 10_000, `${ok} ok, ${stopped} cancelled by walltime; others: ${JSON.stringify([...new Set(rows.filter((r) => !r.ok && r.error !== reason).map((r) => r.error))])}`);
    assert.equal(outcome.summary.failed, 0);
  });
});

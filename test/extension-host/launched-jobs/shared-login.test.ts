import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { writeHostfile } from '../../../src/core/hostfile/write.ts';
import { startSimCluster, type SimCluster } from '../../../src/sim/cluster.ts';
import type { SwarmLabApi } from '../../../src/extension/extension.ts';
import type { LaunchArgs } from '../../../src/extension/commands/launch.ts';
import { step } from './steps.ts';
import { until } from '../until.ts';
import { patience } from '../../helpers/patience.ts';

/**
 * One SSH login per window, in the real extension host, through a real sshd to a real Slurm
 * (test/vscode-launched-jobs.test.ts starts both and passes them in the environment): Launch after
 * Connect and Connect after Launch log in once between them, and closing one user of the login
 * (the connection, the job) leaves the other working on it.
 */
const SSHD_LOG = process.env.SWARM_TEST_SSHD_LOG!;
const SSHD_PORT = process.env.SWARM_TEST_SSHD_PORT!;
const SLURM_CONF = process.env.SWARM_TEST_SLURM_CONF!;
const PORT_BASE = Number(process.env.SWARM_TEST_PORT_BASE);

let api: SwarmLabApi;
let cluster: SimCluster;

/** Logins sshd accepted, from its own log. */
const logins = () => readFileSync(SSHD_LOG, 'utf8').split('\n').filter((l) => l.includes('Accepted publickey')).length;

/** Live ssh masters (`-M`) to the test sshd. */
function masters(): string[] {
  return execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => !l.trim().startsWith('Z') && / -M /.test(l) && l.includes(`-p ${SSHD_PORT}`));
}

async function connectSim(): Promise<void> {
  step('connect');
  const uri = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, 'sim.hostfile');
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(writeHostfile(cluster.endpoints)));
  assert.equal(await vscode.commands.executeCommand('swarmLab.connect', uri), true);
  const view = api.snapshot();
  assert.equal(view.source, 'sim.hostfile');
  assert.deepEqual(view.endpoints.map((e) => [e.status, /^ssh forward 127\.0\.0\.1:\d+$/.test(e.via ?? '')]), [['up', true], ['up', true]]);
}

async function launch(name: string): Promise<string> {
  step(`launch ${name}`);
  const args: LaunchArgs = { jobName: name, form: { scheduler: 'slurm', engine: 'sim', nodes: 1, serversPerNode: 2, walltime: '5', portBase: PORT_BASE } };
  const record = await vscode.commands.executeCommand<{ id: string } | undefined>('swarmLab.launch', args);
  assert.ok(record, 'the launch came to ready');
  step(`job ${record.id} ready`);
  const view = api.snapshot();
  assert.equal(view.job?.phase, 'running');
  assert.equal(view.source, `job ${record.id} · ${name}`);
  assert.deepEqual(view.endpoints.map((e) => [e.status, /^ssh forward /.test(e.via ?? '')]), [['up', true], ['up', true]]);
  return record.id;
}

const squeue = () => execFileSync('squeue', ['-h', '-o', '%i'], { encoding: 'utf8', env: { ...process.env, SLURM_CONF } }).trim();

describe('one SSH login per window (real sshd, real Slurm)', function () {
  this.timeout(patience(240_000));

  before(async function () {
    if (!SSHD_LOG) return this.skip(); // run by test/vscode-launched-jobs.test.ts, which starts sshd and Slurm
    api = await vscode.extensions.getExtension<SwarmLabApi>('swarm-lab.swarm-lab')!.activate();
    cluster = await startSimCluster(2, { ttftMs: 0, tpotMs: 0, requestOverheadMs: 0 });
  });

  // A test stopped half-way leaves nothing to the next: its job cancelled, its connection closed.
  afterEach(async () => {
    if (api.snapshot().job?.live) await vscode.commands.executeCommand('swarmLab.cancelJob', { confirmed: true });
    await vscode.commands.executeCommand('swarmLab.disconnect');
    await until(() => masters().length === 0, 'no login left', 15_000).catch(() => undefined);
  });

  after(async () => {
    await cluster?.close();
  });

  it('Launch after Connect rides the Connect\'s login; after Disconnect the job is still polled on it, and the login ends with the job', async () => {
    const before = logins();
    assert.deepEqual(masters(), [], 'no login yet');
    await connectSim();
    assert.equal(logins() - before, 1, 'Connect logged in once');
    const id = await launch('share-a');
    assert.equal(logins() - before, 1, 'Launch rode the same login: no second one');
    assert.equal(masters().length, 1);

    step('disconnect');
    await vscode.commands.executeCommand('swarmLab.disconnect');
    assert.equal(api.snapshot().connected, false);
    assert.equal(masters().length, 1, 'the job still holds the login');
    // The job ends by another hand: the watch sees it only by polling Slurm over the login.
    step('scancel by another hand');
    execFileSync('scancel', [id], { env: { ...process.env, SLURM_CONF } });
    await until(() => api.snapshot().job?.phase === 'cancelled' && !api.snapshot().job?.live, 'the job watch to see the job cancelled', 30_000);
    assert.equal(logins() - before, 1, 'still one login');
    await until(() => masters().length === 0, 'the login to end once its last user let go', 15_000);
    await until(() => squeue() === '', 'Slurm to have no job of ours', 30_000);
  });

  it('Connect after Launch rides the launch\'s login; Cancel Job leaves the connection working on it; Disconnect ends the login', async () => {
    const before = logins();
    assert.deepEqual(masters(), [], 'no login left from the last test');
    const id = await launch('share-b');
    assert.equal(logins() - before, 1, 'Launch logged in once');
    await connectSim();
    assert.equal(logins() - before, 1, 'Connect rode the launch\'s login');
    assert.equal(api.snapshot().job?.id, id);
    assert.equal(api.snapshot().job?.live, true, 'the job is still followed');

    step('Cancel Job');
    assert.equal(await vscode.commands.executeCommand('swarmLab.cancelJob', { confirmed: true }), true);
    await until(() => squeue() === '', 'Slurm to have no job of ours', 30_000);
    await until(() => api.snapshot().job?.live === false, 'the watch to see the job ended', 30_000);
    // The connection keeps its forwards on the login the job let go of.
    assert.equal(api.snapshot().source, 'sim.hostfile');
    assert.equal(masters().length, 1, 'the connection still holds the login');
    await vscode.commands.executeCommand('swarmLab.refresh');
    assert.deepEqual(api.snapshot().endpoints.map((e) => e.status), ['up', 'up'], 'health checks still go through the forwards');
    assert.equal(logins() - before, 1, 'still one login');

    await vscode.commands.executeCommand('swarmLab.disconnect');
    await until(() => masters().length === 0, 'the login to end with its last user', 15_000);
  });
});

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { Scheduler, localHost } from '../src/core/index.ts';
import { finished, jsonLines, runCli, spawnCli, waitFor, writeText, ROOT } from './helpers/cli.ts';
import { haveSshd, TestSshd } from './helpers/sshd.ts';
import { freePorts, slurmUnavailable, TestSlurm, withSlurm } from './helpers/slurm.ts';

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });

describe('swarm launch on a real Slurm', { skip: slurmUnavailable ?? false }, () => {
  const slurm = new TestSlurm();
  let dir = '';
  const env = () => slurm.env;
  withSlurm(slurm, (made) => (dir = made));
  // A test that failed half-way may leave its job holding the node: the next one starts on an empty queue.
  afterEach(async () => {
    slurm.client('scancel', ['--user', 'root']);
    await waitFor(() => (slurm.client('squeue', ['-h', '-o', '%i']).trim() === '' ? true : undefined), 30_000, 'an empty queue');
  });

  it('launch → queued (behind another job) → running → ready → scatter → jobs → cancel-job, nothing left', async () => {
    // A job holding every CPU keeps ours queued until it is cancelled.
    const blocker = slurm.client('sbatch', ['--parsable', `--cpus-per-task=${slurm.cpus}`, '--wrap', 'sleep 600']).trim();
    assert.match(blocker, /^\d+$/);
    const base = await freePorts(2);
    const child = spawnCli(['launch', '--scheduler', 'slurm', '--engine', 'sim', '--servers-per-node', '2', '--port-base', String(base), '--walltime', '5', '--interval', '0.3', '--job-name', 'lifecycle'], { env: env(), cwd: dir });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    const done = finished(child, 'swarm launch', 90_000);
    const queued = await waitFor(() => stderr.split('\n').find((l) => /^job \d+: queued \(PENDING, (Resources|Priority)\), position 1 in debug/.test(l)), 30_000, 'a queued line with its position');
    const id = /^job (\d+)/.exec(queued)![1]!;
    slurm.client('scancel', [blocker]);
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, new RegExp(`^submitted job ${id} to slurm on this machine: 1 node\\(s\\) × 2 sim server\\(s\\)`, 'm'));
    assert.match(result.stderr, new RegExp(`^job ${id}: running \\(RUNNING\\), on ${slurm.node}, walltime left (4 min \\d\\d|5 min 00) s`, 'm'));
    assert.match(result.stderr, new RegExp(`^job ${id}: 2/2 server\\(s\\) up in the hostfile$`, 'm'));
    assert.match(result.stdout, new RegExp(`^ready: job ${id} \\(slurm\\), 2/2 server\\(s\\) healthy`, 'm'));

    // The job wrote the hostfile itself, one line per server as it came up.
    const jobDir = join(dir, '.swarm', 'jobs', 'lifecycle');
    const lines = (await readFile(join(jobDir, 'hostfile'), 'utf8')).trim().split('\n').sort();
    assert.deepEqual(lines, [`127.0.0.1\t${base}\trole=chat\tmodel=sim-model`, `127.0.0.1\t${base + 1}\trole=chat\tmodel=sim-model`]);
    const record = JSON.parse(await readFile(join(jobDir, 'job.json'), 'utf8'));
    assert.equal(record.id, id);
    assert.equal(record.scheduler, 'slurm');

    const prompts = await writeText(dir, 'prompts.txt', Array.from({ length: 2000 }, (_, i) => `prompt ${i + 1}`).join('\n'));
    const scatter = await runCli(['scatter', '--hostfile', join(jobDir, 'hostfile.ready'), '--prompts', prompts, '--quiet'], { timeoutMs: 60_000 });
    assert.equal(scatter.code, 0, scatter.stderr);
    const rows = jsonLines(scatter.stdout);
    assert.equal(rows.length, 2000);
    assert.ok(rows.every((r, i) => r.ok && r.text === `completion: prompt ${i + 1}`));
    assert.deepEqual(new Set(rows.map((r) => r.endpoint)), new Set([`127.0.0.1:${base}`, `127.0.0.1:${base + 1}`]));

    const jobs = await runCli(['jobs'], { env: env(), cwd: dir });
    assert.equal(jobs.code, 0, jobs.stderr);
    assert.match(jobs.stdout, new RegExp(`^${id}\\tslurm\\tlifecycle\\t1×2 sim sim-model\\trunning \\(RUNNING\\), on ${slurm.node}, walltime left`, 'm'));

    const cancel = await runCli(['cancel-job', id], { env: env(), cwd: dir });
    assert.equal(cancel.code, 0, cancel.stderr);
    assert.match(cancel.stderr, new RegExp(`^cancelled job ${id} \\(slurm on this machine\\)$`, 'm'));
    await waitFor(async () => ((await refused(base)) && (await refused(base + 1)) ? true : undefined), 20_000, "the job's servers to stop");
    const after = await runCli(['jobs'], { env: env(), cwd: dir });
    assert.match(after.stdout, new RegExp(`^${id}\\t.*\\tcancelled \\(CANCELLED\\)`, 'm'));
  });

  it('a refused submission is one line and exit 2, with no job left', async () => {
    const r = await runCli(['launch', '--scheduler', 'slurm', '--engine', 'sim', '--queue', 'nosuchpartition', '--interval', '0.3'], { env: env(), cwd: dir });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^sbatch refused the job: .*Invalid partition name specified/);
  });

  it('a job whose servers die at start fails the launch (exit 1), saying how the job ended', async () => {
    const r = await runCli(['launch', '--scheduler', 'slurm', '--engine', 'sim', '--swarm-command', '/bin/false', '--port-base', String(await freePorts(1)), '--interval', '0.3', '--job-name', 'dies'], { env: env(), cwd: dir, timeoutMs: 60_000 });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^job \d+ ended \(failed: NonZeroExitCode\) before 1 of its 1 server\(s\) were up$/m);
    const out = await readFile(join(dir, '.swarm', 'jobs', 'dies', `job-${/^job (\d+) ended/m.exec(r.stderr)![1]}.out`), 'utf8');
    assert.match(out, /server 127\.0\.0\.1:\d+ exited before it was healthy/);
  });

  it('scatter --drain-before on the job\'s hostfile drains by itself before the walltime: the rows in flight finish, the rest are drained; drain --job finds no run after', async () => {
    const base = await freePorts(2);
    const launch = await runCli(['launch', '--scheduler', 'slurm', '--engine', 'sim', '--servers-per-node', '2', '--port-base', String(base), '--walltime', '2', '--interval', '0.3', '--job-name', 'drains'], { env: env(), cwd: dir, timeoutMs: 60_000 });
    assert.equal(launch.code, 0, launch.stderr);
    const id = /^ready: job (\d+)/m.exec(launch.stdout)![1]!;
    const record = JSON.parse(await readFile(join(dir, '.swarm', 'jobs', 'drains', 'job.json'), 'utf8'));
    assert.ok(record.endsAt && record.startedAt, 'the record has the walltime end once ready');
    assert.deepEqual(record.nodeNames, [slurm.node]);
    const prompts = await writeText(dir, 'many.txt', Array.from({ length: 10_000 }, (_, i) => `prompt ${i + 1}`).join('\n'));
    const out = join(dir, 'drained.jsonl');
    // Drains 15 s after the job started, well before 10,000 prompts two at a time are through.
    const r = await runCli(['scatter', '--hostfile', join(dir, '.swarm', 'jobs', 'drains', 'hostfile.ready'), '--prompts', prompts, '--no-batch', '--concurrency', '2', '--out', out, '--drain-before', '1.75', '--quiet'], { cwd: dir, timeoutMs: 90_000 });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^draining \\(job ${id} reaches its walltime at \\d\\d:\\d\\d:\\d\\d\\): the requests in flight finish`, 'm'));
    const rows = jsonLines(await readFile(out, 'utf8'));
    assert.equal(rows.length, 10_000);
    const ok = rows.filter((row) => row.ok).length;
    const drained = rows.filter((row) => row.status === 'cancelled' && /^drained: not sent/.test(row.error)).length;
    assert.ok(ok > 0 && drained > 0 && ok + drained === 10_000, `${ok} ok, ${drained} drained`);
    const none = await runCli(['drain', '--job', id], { cwd: dir });
    assert.equal(none.stderr, `no run on job ${id} is going on from this folder: nothing to drain\n`);
    assert.equal((await runCli(['cancel-job', id], { env: env(), cwd: dir })).code, 0);
  });

  it('a job cancelled outside mid-scatter: the run says the job ended early, what was in flight and unsent is cancelled by job end (none failed), and --resume on the next job completes the file in order', async () => {
    const launchJob = async (name: string) => {
      const launch = await runCli(['launch', '--scheduler', 'slurm', '--engine', 'sim', '--servers-per-node', '2', '--port-base', String(await freePorts(2)), '--walltime', '10', '--interval', '0.3', '--job-name', name], { env: env(), cwd: dir, timeoutMs: 60_000 });
      assert.equal(launch.code, 0, launch.stderr);
      return { id: /^ready: job (\d+)/m.exec(launch.stdout)![1]!, hostfile: join(dir, '.swarm', 'jobs', name, 'hostfile.ready') };
    };
    const first = await launchJob('ends-early');
    const prompts = await writeText(dir, 'many-ends.txt', Array.from({ length: 10_000 }, (_, i) => `prompt ${i + 1}`).join('\n'));
    const out = join(dir, 'ends-early.jsonl');
    const child = spawnCli(['scatter', '--hostfile', first.hostfile, '--prompts', prompts, '--no-batch', '--concurrency', '2', '--out', out, '--quiet'], { env: env(), cwd: dir });
    const done = finished(child, 'swarm scatter', 90_000);
    // Some rows are in, most are not: the job goes away under the run (as a node lost or an operator's scancel would take it).
    // Rows land in the file's .partial as they finish (the file itself is written in input order at the end).
    await waitFor(async () => ((await readFile(`${out}.partial`, 'utf8').catch(() => '')).split('\n').length > 200 ? true : undefined), 60_000, 'rows in the results file');
    slurm.client('scancel', [first.id]);
    const r = await done;
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^cancelled by job end: job ${first.id} ended before its walltime \\((cancelled \\(CANCELLED|ending \\(COMPLETING)[^\\n]*\\) \\(--resume finishes it on the next job\\): the requests in flight and the prompts not sent are cancelled$`, 'm'));
    assert.match(r.stderr, new RegExp(`^job ended early: job ${first.id} ended before its walltime .*; [\\d,]+ prompt\\(s\\) cancelled by the job's end; complete them with swarm scatter --resume ${out.replace(/[.]/g, '\\.')} --prompts `, 'm'));
    const rows = jsonLines(await readFile(out, 'utf8'));
    assert.deepEqual(rows.map((row) => row.index), [...Array(10_000).keys()]);
    const ok = rows.filter((row) => row.ok).length;
    const ended = rows.filter((row) => row.status === 'cancelled' && row.error.startsWith(`cancelled by job end: job ${first.id} ended before its walltime`)).length;
    assert.ok(ok > 0 && ended > 0 && ok + ended === 10_000, `${ok} ok, ${ended} cancelled by job end, ${10_000 - ok - ended} other: ${JSON.stringify([...new Set(rows.filter((row) => !row.ok).map((row) => row.error))])}`);

    // The next job finishes exactly those.
    const second = await launchJob('ends-early-next');
    const resumed = await runCli(['scatter', '--resume', out, '--prompts', prompts, '--hostfile', second.hostfile, '--quiet'], { env: env(), cwd: dir, timeoutMs: 90_000 });
    assert.equal(resumed.code, 0, resumed.stderr);
    const whole = jsonLines(await readFile(out, 'utf8'));
    assert.equal(whole.length, 10_000);
    assert.ok(whole.every((row, i) => row.ok && row.index === i && row.prompt === `prompt ${i + 1}` && row.text === `completion: prompt ${i + 1}`));
    assert.equal((await runCli(['cancel-job', second.id], { env: env(), cwd: dir })).code, 0);
  });

  it('the Scheduler over this machine: status of an unknown job is undefined; cancelling a finished one is fine', async () => {
    const scheduler = new Scheduler('slurm', localHost({ ...process.env, ...slurm.env }));
    assert.equal(await scheduler.status('999999'), undefined);
    const id = slurm.client('sbatch', ['--parsable', '--wrap', 'true']).trim();
    await waitFor(async () => ((await scheduler.status(id))?.phase === 'completed' ? true : undefined), 20_000, 'the job to complete');
    await scheduler.cancel(id);
  });

  it('the Scheduler asks again while the controller is down: a status asked during a slurmctld restart is answered once it is back', async () => {
    const id = slurm.client('sbatch', ['--parsable', '--wrap', 'sleep 600']).trim();
    assert.match(id, /^\d+$/);
    await waitFor(() => (/ JobState=RUNNING /.test(slurm.client('scontrol', ['show', 'job', '-o', id])) ? true : undefined), 30_000, 'the job to run');
    // The scheduler's commands as it ran them (this machine's host, watched): the first must fail for the test to mean anything.
    const host = localHost({ ...process.env, ...slurm.env });
    const codes: Array<number | null> = [];
    const watched = { ...host, run: async (argv: readonly string[]) => { const r = await host.run(argv); codes.push(r.code); return r; } };
    await slurm.stopController();
    try {
      const asked = new Scheduler('slurm', watched).status(id);
      await waitFor(() => (codes.length > 0 ? true : undefined), 30_000, 'a first scontrol');
      assert.notEqual(codes[0], 0, 'scontrol failed while slurmctld was down');
      slurm.startController();
      const job = await asked;
      assert.equal(job?.phase, 'running', JSON.stringify(job));
      assert.ok(codes.length >= 2 && codes.at(-1) === 0, `asked ${codes.length} times: ${codes.join(', ')}`);
    } finally {
      slurm.startController();
      await waitFor(() => (slurm.client('scontrol', ['ping']).includes('UP') ? true : undefined), 60_000, 'slurmctld back');
    }
    slurm.client('scancel', [id]);
  });

  it('through --via: submission, queue polling and health ride one SSH login', { skip: haveSshd ? false : 'openssh-server is not installed (scripts/install-test-deps.sh)' }, async () => {
    // The login's shell must find this cluster too: the server sets SLURM_CONF for every session.
    const sshd = new TestSshd({ SLURM_CONF: slurm.conf });
    await sshd.start();
    try {
      const base = await freePorts(2);
      const jobDir = join(dir, 'remote-job');
      const r = await runCli(['launch', '--scheduler', 'slurm', '--engine', 'sim', '--servers-per-node', '2', '--port-base', String(base), '--walltime', '5', '--interval', '0.3', '--job-name', 'via', '--job-dir', jobDir, '--swarm-command', `${process.execPath} ${join(ROOT, 'bin', 'swarm.js')}`, '--via', sshd.via, '--ssh-config', sshd.clientConfig], { cwd: dir, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`^submitted job \\d+ to slurm on ${sshd.via.replace(/[.]/g, '\\.')}:`, 'm'));
      assert.match(r.stdout, /^ready: job \d+ \(slurm\), 2\/2 server\(s\) healthy/m);
      assert.equal(sshd.logins(), 1, 'one login for everything');
      const id = /^ready: job (\d+)/m.exec(r.stdout)![1]!;
      const cancel = await runCli(['cancel-job', id, '--via', sshd.via, '--ssh-config', sshd.clientConfig], { cwd: dir });
      assert.equal(cancel.code, 0, cancel.stderr);
    } finally {
      await sshd.stop();
    }
  });

  it('a run detached to the login node on a job launched through it watches the job there: the job cancelled mid-run, the run stops cancelled by job end (none failed) and says so in its log', { skip: haveSshd ? false : 'openssh-server is not installed (scripts/install-test-deps.sh)' }, async () => {
    const sshd = new TestSshd({ SLURM_CONF: slurm.conf });
    await sshd.start();
    try {
      const login = ['--via', sshd.via, '--ssh-config', sshd.clientConfig];
      const launch = await runCli(['launch', '--scheduler', 'slurm', '--engine', 'sim', '--servers-per-node', '2', '--port-base', String(await freePorts(2)), '--walltime', '10', '--interval', '0.3', '--job-name', 'detached-watch', '--job-dir', join(dir, 'remote-job-watch'), '--swarm-command', `${process.execPath} ${join(ROOT, 'bin', 'swarm.js')}`, ...login], { cwd: dir, timeoutMs: 90_000 });
      assert.equal(launch.code, 0, launch.stderr);
      const job = /^ready: job (\d+)/m.exec(launch.stdout)![1]!;
      const prompts = await writeText(dir, 'many-detached.txt', Array.from({ length: 10_000 }, (_, i) => `prompt ${i + 1}`).join('\n'));
      const runsDir = join(dir, 'login-runs');
      const started = await runCli(['scatter', '--hostfile', join(dir, '.swarm', 'jobs', 'detached-watch', 'hostfile.ready'), '--prompts', prompts, '--no-batch', '--concurrency', '2', '--detach', ...login, '--runs-dir', runsDir], { cwd: dir, timeoutMs: 90_000 });
      assert.equal(started.code, 0, started.stderr);
      const id = started.stdout.trim();
      const folder = join(runsDir, id);
      // The job's record travelled beside its hostfile, without the login: the scheduler is where the run is.
      const spec = JSON.parse(await readFile(join(folder, 'spec.json'), 'utf8'));
      const hostfile = spec.inputs.find((f: { flag: string }) => f.flag === '--hostfile').path as string;
      assert.equal(basename(hostfile), 'hostfile.ready');
      const record = JSON.parse(await readFile(join(dirname(hostfile), 'job.json'), 'utf8'));
      assert.equal(record.id, job);
      assert.equal(record.via, undefined);
      const status = async () => JSON.parse(await readFile(join(folder, 'status.json'), 'utf8'));
      await waitFor(async () => ((await status()).ok >= 100 ? true : undefined), 60_000, 'a hundred results');
      slurm.client('scancel', [job]);
      await waitFor(async () => ((await status()).state === 'finished' ? true : undefined), 90_000, 'the run to end');
      const end = await status();
      assert.equal(end.exitCode, 1);
      const log = await readFile(join(folder, 'log.txt'), 'utf8');
      assert.match(log, new RegExp(`^cancelled by job end: job ${job} ended before its walltime .*: the requests in flight and the prompts not sent are cancelled$`, 'm'));
      // Its last line says how to complete it from the client: the run's own inputs are copies on the login node.
      const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      assert.match(log, new RegExp(`^job ended early: .*; complete them with swarm resume ${id} --via ${escaped(sshd.via)} --runs-dir ${escaped(runsDir)} --hostfile <the next swarm's>$`, 'm'));
      const rows = jsonLines(await readFile(join(folder, 'results.jsonl'), 'utf8'));
      assert.deepEqual(rows.map((row) => row.index), [...Array(10_000).keys()]);
      const ok = rows.filter((row) => row.ok).length;
      const ended = rows.filter((row) => row.status === 'cancelled' && row.error.startsWith(`cancelled by job end: job ${job} ended before its walltime`)).length;
      assert.ok(ok >= 100 && ended > 0 && ok + ended === 10_000, `${ok} ok, ${ended} cancelled by job end, ${10_000 - ok - ended} other: ${JSON.stringify([...new Set(rows.filter((row) => !row.ok).map((row) => row.error))])}`);
    } finally {
      await sshd.stop();
    }
  });
});

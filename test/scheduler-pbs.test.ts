/**
 * The PBS adapter against recorded outputs (test/fixtures/pbs/: PBS Pro is not packaged for Debian, so
 * no live server): the command lines it builds, and what it reads from qsub, qstat -f -F json and qdel.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pbs, queuePosition, Scheduler, SchedulerError, walltimeEnd, type CommandResult, type JobHost } from '../src/core/index.ts';
import { ROOT } from './helpers/cli.ts';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'pbs');
const ID = '4120513.aurora-pbs-0001.hostmgmt.cm.aurora.alcf.anl.gov';

/** A recorded answer: a .json file is qstat's stdout (exit 0); a .txt file holds exit code, stdout, stderr. */
function recorded(name: string): CommandResult {
  const text = readFileSync(join(FIXTURES, name), 'utf8');
  if (name.endsWith('.json')) return { code: 0, stdout: text, stderr: '' };
  const [code, rest] = [text.slice(0, text.indexOf('\n')), text.slice(text.indexOf('\n') + 1)];
  const [, stdout = '', stderr = ''] = /^--- stdout\n([\s\S]*?)--- stderr\n([\s\S]*)$/.exec(rest) ?? [];
  return { code: Number(code), stdout, stderr };
}

/** A JobHost that answers each command line with a recorded output and remembers what it was asked. */
function recordedHost(answers: Record<string, string>): JobHost & { asked: string[][] } {
  const asked: string[][] = [];
  return {
    label: 'aurora',
    asked,
    run: async (argv) => {
      asked.push([...argv]);
      const file = answers[argv.join(' ')];
      if (!file) throw new Error(`no recorded answer for: ${argv.join(' ')}`);
      return recorded(file);
    },
    readText: async () => undefined,
    writeText: async () => {},
    home: async () => '/home/brettin',
  };
}

describe('PBS command lines', () => {
  it('qsub the script; qstat -f -F json with history for one job; the queue; qdel', () => {
    assert.deepEqual(pbs.submitArgv('/home/u/.swarm/jobs/a/job.sh'), ['qsub', '/home/u/.swarm/jobs/a/job.sh']);
    assert.deepEqual(pbs.statusArgv(ID), ['qstat', '-f', '-F', 'json', '-x', ID]);
    assert.deepEqual(pbs.queueArgv('debug-scaling'), ['qstat', '-f', '-F', 'json', 'debug-scaling']);
    assert.deepEqual(pbs.queueArgv(), ['qstat', '-f', '-F', 'json']);
    assert.deepEqual(pbs.cancelArgv(ID), ['qdel', ID]);
  });

  it('job ids are checked before they reach a command line', () => {
    for (const good of [ID, '4120513', '4120513[].aurora-pbs-0001']) assert.equal(pbs.checkId(good), good);
    for (const bad of ['-x', '4120513; rm -rf ~', '', 'abc', '4120513 .server']) {
      assert.throws(() => pbs.checkId(bad), (err: SchedulerError) => err instanceof SchedulerError && err.refused && /is not a PBS job id/.test(err.message));
    }
  });
});

describe('PBS outputs', () => {
  it('qsub: the job id; refusals in the server\'s words, as bad input', () => {
    assert.equal(pbs.parseSubmit(recorded('qsub-ok.txt')), ID);
    for (const [file, words] of [['qsub-unknown-queue.txt', 'Unknown queue'], ['qsub-limits.txt', 'Job violates queue and/or server resource limits'], ['qsub-walltime.txt', 'Illegal attribute or resource value Resource_List.walltime']] as const) {
      assert.throws(() => pbs.parseSubmit(recorded(file)), (err: SchedulerError) => err.refused && err.message === `qsub refused the job: qsub: ${words}`);
    }
  });

  it('a queued job: its comment, the estimated start, the walltime asked, no nodes yet', () => {
    const job = pbs.parseStatus(recorded('qstat-queued.json'), ID)!;
    assert.equal(job.phase, 'queued');
    assert.equal(job.schedulerState, 'Q');
    assert.equal(job.queue, 'debug-scaling');
    assert.equal(job.user, 'brettin');
    assert.equal(job.name, 'swarm-20261126-101200');
    assert.equal(job.reason, 'Not Running: Insufficient amount of resource: ncpus (R: 416 A: 208 T: 4160)');
    assert.deepEqual(job.startEstimate, new Date(2026, 10, 26, 10, 40, 0));
    assert.deepEqual(job.submittedAt, new Date(2026, 10, 26, 10, 12, 4));
    assert.equal(job.walltimeSeconds, 1800);
    assert.deepEqual(job.nodes, []);
    assert.equal(job.startedAt, undefined);
  });

  it('a running job: its nodes from exec_host, when it started and when its walltime ends', () => {
    const job = pbs.parseStatus(recorded('qstat-running.json'), ID)!;
    assert.equal(job.phase, 'running');
    assert.deepEqual(job.nodes, ['x4102c5s2b0n0', 'x4102c5s3b0n0']);
    assert.deepEqual(job.startedAt, new Date(2026, 10, 26, 10, 40, 2));
    assert.deepEqual(walltimeEnd(job), new Date(2026, 10, 26, 11, 10, 2));
    assert.equal(job.startEstimate, undefined);
  });

  it('finished jobs say how they ended: walltime (-29), qdel (256 + SIGTERM)', () => {
    const walltime = pbs.parseStatus(recorded('qstat-walltime.json'), ID)!;
    assert.equal(walltime.phase, 'timeout');
    assert.equal(walltime.exitCode, -29);
    const cancelled = pbs.parseStatus(recorded('qstat-qdel.json'), ID)!;
    assert.equal(cancelled.phase, 'cancelled');
    assert.equal(cancelled.exitCode, 271);
  });

  it('an unknown job is undefined (forgotten by the history), not an error', () => {
    assert.equal(pbs.parseStatus(recorded('qstat-unknown.txt'), '4120999.aurora-pbs-0001.hostmgmt.cm.aurora.alcf.anl.gov'), undefined);
  });

  it("a pre-2020 server's invalid JSON (raw environment values) is read all the same", () => {
    const job = pbs.parseStatus(recorded('qstat-legacy-variable-list.json'), ID)!;
    assert.equal(job.phase, 'queued');
    assert.equal(job.walltimeSeconds, 1800);
  });

  it('the queue listing gives the position: queued jobs of the same queue submitted earlier go first', () => {
    const jobs = pbs.parseQueue(recorded('qstat-queue.json'));
    assert.equal(jobs.length, 7);
    // Ahead: 4120455 and 4120488 (queued earlier in debug-scaling); not the running, held, later or prod ones.
    assert.equal(queuePosition(jobs, ID), 3);
    assert.equal(queuePosition(jobs, '4120455.aurora-pbs-0001.hostmgmt.cm.aurora.alcf.anl.gov'), 1);
    assert.equal(queuePosition(jobs, '4120401.aurora-pbs-0001.hostmgmt.cm.aurora.alcf.anl.gov'), undefined, 'running: no position');
  });

  it('qdel: a finished or unknown job is already what was asked; a refusal is an error', () => {
    pbs.parseCancel(recorded('qdel-finished.txt'), ID);
    pbs.parseCancel({ code: 153, stdout: '', stderr: `qdel: Unknown Job Id ${ID}` }, ID);
    assert.throws(() => pbs.parseCancel(recorded('qdel-unauthorized.txt'), ID), /^SchedulerError: qdel .*: qdel: Unauthorized Request/);
  });
});

describe('the Scheduler over PBS, on recorded answers', () => {
  it('status of a queued job runs qstat for it, then the queue for its position', async () => {
    const host = recordedHost({ [`qstat -f -F json -x ${ID}`]: 'qstat-queued.json', 'qstat -f -F json debug-scaling': 'qstat-queue.json' });
    const job = (await new Scheduler('pbs', host).status(ID))!;
    assert.equal(job.position, 3);
    assert.deepEqual(host.asked, [['qstat', '-f', '-F', 'json', '-x', ID], ['qstat', '-f', '-F', 'json', 'debug-scaling']]);
  });

  it('a running job needs one command; submit returns the id qsub printed', async () => {
    const host = recordedHost({ [`qstat -f -F json -x ${ID}`]: 'qstat-running.json', 'qsub /home/brettin/.swarm/jobs/a/job.sh': 'qsub-ok.txt' });
    const scheduler = new Scheduler('pbs', host);
    assert.equal((await scheduler.status(ID))!.position, undefined);
    assert.equal(await scheduler.submit('/home/brettin/.swarm/jobs/a/job.sh'), ID);
    assert.equal(host.asked.length, 2);
  });

  it('cancel refuses a bad id before running anything', async () => {
    const host = recordedHost({});
    await assert.rejects(new Scheduler('pbs', host).cancel('1; qdel all'), /is not a PBS job id/);
    assert.deepEqual(host.asked, []);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expandHostlist, formatWalltime, humanDuration, jobEndReason, parseDuration, slurm, walltimeReached, type JobState } from '../src/core/index.ts';

describe('scheduler units', () => {
  it("Slurm host lists: ranges, lists, zero padding, several brackets", () => {
    assert.deepEqual(expandHostlist('vm'), ['vm']);
    assert.deepEqual(expandHostlist('n[08-10],login01'), ['n08', 'n09', 'n10', 'login01']);
    assert.deepEqual(expandHostlist('x1000c0s[1-2,7]b0n0'), ['x1000c0s1b0n0', 'x1000c0s2b0n0', 'x1000c0s7b0n0']);
    assert.deepEqual(expandHostlist('r[1-2]n[1-2]'), ['r1n1', 'r1n2', 'r2n1', 'r2n2']);
    assert.deepEqual(expandHostlist(''), []);
  });

  it('walltimes as the schedulers write them', () => {
    assert.equal(parseDuration('00:30:00'), 1800);
    assert.equal(parseDuration('1-02:00:00'), 93_600);
    assert.equal(parseDuration('30'), 1800, 'Slurm: plain minutes');
    assert.equal(parseDuration('3600', 'seconds'), 3600, 'PBS: plain seconds');
    assert.equal(parseDuration('05:30'), 330, 'MM:SS');
    assert.equal(parseDuration('UNLIMITED'), undefined);
    assert.equal(formatWalltime(93_600), '26:00:00');
    assert.equal(humanDuration(3900), '1 h 05 min');
    assert.equal(humanDuration(250), '4 min 10 s');
  });

  it('scontrol show job -o, as Slurm 22.05 printed it here for a pending job', () => {
    const line =
      'JobId=3 JobName=t1 UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901757 Nice=0 Account=(null) QOS=(null) JobState=PENDING Reason=Resources Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:00 TimeLimit=00:05:00 TimeMin=N/A SubmitTime=2026-11-26T07:45:39 EligibleTime=2026-11-26T07:45:39 AccrueTime=2026-11-26T07:45:39 StartTime=Unknown EndTime=Unknown Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-26T07:45:40 Scheduler=Main Partition=debug AllocNode:Sid=localhost:2116 ReqNodeList=(null) ExcNodeList=(null) NodeList= NumNodes=1 NumCPUs=2 NumTasks=1 CPUs/Task=2 ReqB:S:C:T=0:0:*:* TRES=cpu=2,mem=4000M,node=1,billing=2 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=2 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=/tmp/slx-ghTD/j.sh WorkDir=/tmp/slx-ghTD StdErr=/tmp/slx-ghTD/slurm-3.out StdIn=/dev/null StdOut=/tmp/slx-ghTD/slurm-3.out Power= ';
    const job = slurm.parseStatus({ code: 0, stdout: `${line}\n`, stderr: '' }, '3')!;
    assert.equal(job.phase, 'queued');
    assert.equal(job.reason, 'Resources');
    assert.equal(job.user, 'root');
    assert.equal(job.walltimeSeconds, 300);
    assert.deepEqual(job.submittedAt, new Date(2026, 10, 26, 7, 45, 39));
    assert.equal(job.startEstimate, undefined, 'StartTime=Unknown: no estimate');
    assert.deepEqual(job.nodes, []);
    const held = slurm.parseStatus({ code: 0, stdout: line.replace('Reason=Resources', 'Reason=JobHeldUser'), stderr: '' }, '3')!;
    assert.equal(held.phase, 'held');
    assert.equal(slurm.parseStatus({ code: 1, stdout: '', stderr: 'slurm_load_jobs error: Invalid job id specified\n' }, '999'), undefined);
  });
});

describe('why a run on a job stops when the scheduler says the job ended', () => {
  const state = (phase: JobState['phase'], schedulerState: string, reason?: string): JobState => ({ id: '7', phase, schedulerState, nodes: ['x1'], ...(reason ? { reason } : {}) });
  it('running or queued: no reason; the walltime: cancelled by walltime; any other end, or forgotten: cancelled by job end, in the scheduler\'s words', () => {
    assert.equal(jobEndReason('7', state('running', 'RUNNING')), undefined);
    assert.equal(jobEndReason('7', state('starting', 'CONFIGURING')), undefined);
    assert.equal(jobEndReason('7', state('timeout', 'TIMEOUT')), walltimeReached('7'));
    assert.equal(jobEndReason('7', state('lost', 'NODE_FAIL', 'NodeDown')), 'cancelled by job end: job 7 ended before its walltime (lost (NODE_FAIL, NodeDown), on x1) (--resume finishes it on the next job)');
    assert.match(jobEndReason('7', state('cancelled', 'CANCELLED'))!, /^cancelled by job end: job 7 ended before its walltime \(cancelled \(CANCELLED\)/);
    assert.match(jobEndReason('7', state('ending', 'COMPLETING'))!, /^cancelled by job end: /);
    assert.match(jobEndReason('7', state('failed', 'FAILED'))!, /^cancelled by job end: /);
    assert.equal(jobEndReason('7', undefined), 'cancelled by job end: job 7 ended before its walltime (its scheduler no longer lists it) (--resume finishes it on the next job)');
  });
});

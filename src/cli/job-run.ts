import type { Command } from 'commander';
import {
  BY_JOB_END,
  BY_WALLTIME,
  jobEndReason,
  jobOfHostfile,
  localHost,
  Scheduler,
  sshHost,
  walltimeReached,
  walltimeStop,
  type JobRecord,
  type RunReport,
} from '../core/index.ts';
import { CliError } from './exit.ts';
import { printable } from './format.ts';
import { num } from './options.ts';
import type { WatchOptions } from './progress.ts';
import type { Swarm } from './swarm.ts';

export interface JobRunFlags {
  hostfile?: string;
  via?: string;
  drainBefore?: number;
}

export function addDrainBeforeOption(cmd: Command): Command {
  return cmd.option(
    '--drain-before <minutes>',
    'on the hostfile of a job `swarm launch` started: drain this long before its walltime ends (what is in flight finishes, nothing new is sent; --resume completes the file on the next job)',
    num('--drain-before', 0, 100_000),
  );
}

/** The launched job a run's hostfile belongs to, once it runs (its end known); --drain-before on any other hostfile is bad input. */
export async function jobOfRun(flags: JobRunFlags): Promise<JobRecord | undefined> {
  const job = flags.hostfile ? await jobOfHostfile(flags.hostfile) : undefined;
  if (job?.endsAt) return job;
  if (flags.drainBefore !== undefined) throw new CliError(`--drain-before: ${flags.hostfile ?? 'the hostfile'} is not the hostfile of a running job swarm launch started here (.swarm/jobs/<name>/hostfile.ready)`);
  return undefined;
}

/**
 * How a run on a launched job's servers is watched: it stops at the job's walltime (cancelled by
 * walltime), drains --drain-before minutes before it, and stops as soon as the scheduler says the
 * job ended early (cancelled by job end) — both for --resume on the next job, never failures.
 * The scheduler is asked where the job was submitted: this machine, or the --via login the run rides.
 */
export function jobWatch(flags: JobRunFlags, job: JobRecord | undefined, swarm: Swarm): WatchOptions {
  const base: WatchOptions = flags.hostfile ? { hostfile: flags.hostfile } : {};
  if (!job?.endsAt) return base;
  const end = new Date(job.endsAt);
  const options: WatchOptions = { ...base, stopAt: { at: walltimeStop(end), reason: walltimeReached(job.id) } };
  if (flags.drainBefore !== undefined) options.drainAt = { at: new Date(end.getTime() - flags.drainBefore * 60_000), why: `job ${job.id} reaches its walltime at ${end.toLocaleTimeString('en-GB', { hour12: false })}` };
  const host = !job.via ? localHost() : swarm.login && job.via === flags.via ? sshHost(swarm.login.commands()) : undefined;
  if (!host) {
    process.stderr.write(`note: job ${job.id} was submitted through ${job.via}: give --via ${job.via} for the run to see the job end early\n`);
    return options;
  }
  const scheduler = new Scheduler(job.scheduler, host);
  options.jobEnd = async () => jobEndReason(job.id, await scheduler.status(job.id));
  return options;
}

/**
 * The line saying a run was stopped by its job (its walltime, or an early end) and how to finish
 * it (`again`: the command that does); undefined for any other end.
 */
export function jobStopLine(report: RunReport<unknown>, again: string): string | undefined {
  const error = report.error ?? '';
  const n = report.summary.cancelled.toLocaleString('en-US');
  if (error.startsWith(BY_WALLTIME)) return `walltime: ${n} prompt(s) cancelled by the walltime; complete them with ${printable(again)}`;
  if (error.startsWith(BY_JOB_END)) return `job ended early: ${printable(error.slice(BY_JOB_END.length + 2).replace(/ \(--resume.*$/, ''))}; ${n} prompt(s) cancelled by the job's end; complete them with ${printable(again)}`;
  return undefined;
}

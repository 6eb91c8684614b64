import { setTimeout as sleep } from 'node:timers/promises';
import { posix } from 'node:path';
import type { Endpoint } from '../endpoints/endpoint.ts';
import { hostfileFromText } from '../hostfile/index.ts';
import { SchedulerError } from './host.ts';
import { isFinished, type JobState } from './job.ts';
import type { Scheduler } from './scheduler.ts';
import { jobHostfile, renderTemplate, templateValues, type LaunchParams } from './template.ts';

export interface Submitted {
  id: string;
  /** Where the rendered script was written on the scheduler's host. */
  scriptPath: string;
  hostfile: string;
}

/** Renders the template, writes the script into the job's folder on the host, submits it. */
export async function submitSwarm(scheduler: Scheduler, template: string, params: LaunchParams): Promise<Submitted> {
  const script = renderTemplate(template, templateValues(params));
  const scriptPath = posix.join(params.jobDir, 'job.sh');
  await scheduler.host.writeText(scriptPath, script);
  return { id: await scheduler.submit(scriptPath), scriptPath, hostfile: jobHostfile(params) };
}

export interface ServersOptions {
  /** Servers the job starts: nodes × servers per node. */
  expected: number;
  /** Share of them that must be listed before the swarm is worth using (0–1). */
  minFraction: number;
  intervalMs: number;
  signal?: AbortSignal;
  /** Each time the job's state changes (queued → running, a new position or estimate). */
  onState?: (job: JobState) => void;
  /** Each time the hostfile lists more servers. */
  onServers?: (listed: number) => void;
}

/** The hostfile's complete lines (the job may be writing the last one right now). */
export function listedServers(text: string | undefined, source: string): Endpoint[] {
  const whole = text?.slice(0, text.lastIndexOf('\n') + 1) ?? '';
  return whole.trim() ? hostfileFromText(whole, source).endpoints : [];
}

/**
 * Follows the job until its hostfile lists at least `minFraction` of its servers (the job writes a
 * server's line once it answers /health). Throws SchedulerError when the job ends, or is forgotten,
 * first. Returns the job's last state and the servers listed.
 */
export async function waitForServers(scheduler: Scheduler, submitted: Submitted, options: ServersOptions): Promise<{ job: JobState; endpoints: Endpoint[] }> {
  const need = Math.max(1, Math.ceil(options.minFraction * options.expected));
  let shown = '';
  let listed = 0;
  for (;;) {
    const job = await scheduler.status(submitted.id);
    if (!job) throw new SchedulerError(`job ${submitted.id} is gone from ${scheduler.kind}: it ended before its servers were ready`);
    const summary = JSON.stringify([job.phase, job.schedulerState, job.reason, job.position, job.startEstimate, job.nodes]);
    if (summary !== shown) {
      shown = summary;
      options.onState?.(job);
    }
    if (isFinished(job.phase)) throw new SchedulerError(`job ${job.id} ended (${job.phase}${job.reason ? `: ${job.reason}` : ''}) before ${need} of its ${options.expected} server(s) were up`);
    if (job.phase === 'running') {
      const endpoints = listedServers(await scheduler.host.readText(submitted.hostfile), `${scheduler.host.label}:${submitted.hostfile}`);
      if (endpoints.length !== listed) options.onServers?.((listed = endpoints.length));
      if (endpoints.length >= need) return { job, endpoints };
    }
    await sleep(options.intervalMs, undefined, options.signal ? { signal: options.signal } : {});
  }
}

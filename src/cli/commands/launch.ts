import { readFile, writeFile } from 'node:fs/promises';
import { posix, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, Option } from 'commander';
import {
  defaultJobName,
  endpointId,
  readyRecord,
  humanDuration,
  isFinished,
  parseDuration,
  SchedulerError,
  submitSwarm,
  TemplateError,
  waitForHealthy,
  waitForServers,
  walltimeEnd,
  writeHostfile,
  type LaunchParams,
  type Scheduler,
  type SchedulerKind,
  type ServerEngine,
  type Submitted,
} from '../../core/index.ts';
import { CliError, EXIT } from '../exit.ts';
import { describeJob } from '../../core/index.ts';
import { JOBS_FOLDER, openJobHost, saveRecord, type JobRecord } from '../job-records.ts';
import { builtinTemplate, thisSwarm } from '../job-templates.ts';
import { claimStop, exitCode, type Stop } from '../interrupt.ts';
import { int, num } from '../options.ts';
import { addReachOptions, openSwarm, type ReachFlags, type Swarm } from '../swarm.ts';

interface LaunchFlags extends ReachFlags {
  scheduler: SchedulerKind;
  nodes: number;
  serversPerNode: number;
  tp: number;
  model?: string;
  portBase: number;
  walltime: string;
  queue?: string;
  account?: string;
  vllmArgs?: string;
  engine: ServerEngine;
  template?: string;
  jobName?: string;
  jobDir?: string;
  swarmCommand?: string;
  role: string;
  minHealthy: number;
  interval: number;
  healthTimeout: number;
  watch?: boolean;
  warnBefore: number;
  keep?: boolean;
}

/**
 * `swarm launch`: the Aurora day from one command. Renders a job template, submits it (through the one
 * SSH login with --via), follows the queue, waits for the job's hostfile and its servers' health, and
 * prints `ready`. With --watch it stays, and warns before the walltime runs out.
 */
export function launchCommand(): Command {
  const cmd = new Command('launch')
    .usage('--scheduler slurm|pbs --model NAME [options]')
    .description('submit a job that starts a swarm of vLLM (or `swarm sim`) servers, follow it through the queue, and wait until enough of them are healthy; the job writes the hostfile')
    .addOption(new Option('--scheduler <kind>', 'the batch scheduler').choices(['slurm', 'pbs']).makeOptionMandatory())
    .option('--nodes <n>', 'nodes to ask for', int('--nodes', 1, 100_000), 1)
    .option('--servers-per-node <k>', 'servers on each node (one per GPU, or per tile on Aurora)', int('--servers-per-node', 1, 1024), 1)
    .option('--tp <n>', "GPUs (Aurora: tiles) per server, vLLM's --tensor-parallel-size", int('--tp', 1, 1024), 1)
    .option('--model <name>', 'model the servers serve (default with --engine sim: sim-model)')
    .option('--port-base <p>', 'port of the first server on each node; the next ones count up', int('--port-base', 1024, 65_535), 8000)
    .option('--walltime <time>', 'walltime, HH:MM:SS or minutes', '01:00:00')
    .option('--queue <name>', 'queue (PBS) or partition (Slurm); default: the scheduler\'s')
    .option('--account <name>', 'account (Slurm) or project (PBS -A) to charge')
    .option('--vllm-args <flags>', 'extra `vllm serve` flags, split at spaces, e.g. "--max-model-len 32768 --dtype bfloat16"')
    .addOption(new Option('--engine <engine>', 'what the job serves with: vllm, or the simulator (sim; sim-llama: real llama.cpp inference on the CPU) with no GPU').choices(['vllm', 'sim', 'sim-llama']).default('vllm'))
    .option('--template <file>', 'job template (default: the shipped one for the scheduler: templates/jobs/slurm.sh or aurora-pbs.sh)')
    .option('--job-name <name>', 'job name (default: swarm-<date>-<time>)')
    .option('--job-dir <path>', `absolute folder for the script, output and hostfile on the scheduler's host (default: ${JOBS_FOLDER}/<job name> here, or under the home folder on the login node)`)
    .option('--swarm-command <command>', 'how the job runs swarm, split at spaces (--engine sim; default on this machine: this node and bin/swarm.js)')
    .option('--role <tag>', 'the role= tag of every server in the hostfile', 'chat')
    .option('--min-healthy <percent>', 'ready once this share of the servers is healthy', num('--min-healthy', 1, 100), 100)
    .option('--interval <seconds>', 'between looks at the queue and the hostfile', num('--interval', 0.2, 3_600), 10)
    .option('--health-timeout <seconds>', 'once the hostfile lists enough servers, how long they may take to answer here', num('--health-timeout', 1, 86_400), 120)
    .option('--watch', 'after ready, keep following the job: warn before its walltime ends and say when it ends (Ctrl-C stops watching, not the job)')
    .option('--warn-before <minutes>', 'with --watch: how long before the walltime ends to warn', num('--warn-before', 0, 10_000), 10)
    .option('--keep', 'leave the job queued or running when the launch fails or is interrupted (default: cancel it, leaving nothing behind)');
  addReachOptions(cmd, false);
  return cmd.action(async (flags: LaunchFlags) => {
    if (flags.remoteHostfile) throw new CliError('swarm launch writes its own hostfile; --remote-hostfile is for swarms started elsewhere');
    const walltimeSeconds = parseDuration(flags.walltime);
    if (walltimeSeconds === undefined) throw new CliError(`--walltime ${flags.walltime}: give HH:MM:SS, D-HH:MM:SS or minutes`);
    const templatePath = flags.template ?? builtinTemplate(flags.scheduler);
    const template = await readFile(templatePath, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new CliError(`--template ${templatePath}: cannot read it (${err.code ?? err.message})`);
    });
    if (flags.jobDir && !posix.isAbsolute(flags.jobDir)) throw new CliError(`--job-dir ${flags.jobDir}: must be absolute`);
    const name = flags.jobName ?? defaultJobName();
    const stop = claimStop();
    const opened = await openJobHost(flags);
    const scheduler = opened.scheduler(flags.scheduler);
    let submitted: Submitted | undefined;
    let ready = false;
    let swarm: Swarm | undefined;
    try {
      const jobDir = flags.jobDir ?? (opened.login ? posix.join(await opened.host.home(), '.swarm', 'jobs', name) : resolve(JOBS_FOLDER, name));
      const params: LaunchParams = {
        scheduler: flags.scheduler,
        jobName: name,
        nodes: flags.nodes,
        serversPerNode: flags.serversPerNode,
        tensorParallel: flags.tp,
        model: flags.model ?? (flags.engine === 'vllm' ? '' : 'sim-model'),
        portBase: flags.portBase,
        walltimeSeconds,
        vllmFlags: words(flags.vllmArgs),
        engine: flags.engine,
        jobDir,
        swarmCommand: flags.swarmCommand ? words(flags.swarmCommand) : opened.login ? [] : thisSwarm(),
        role: flags.role,
        ...(flags.queue ? { queue: flags.queue } : {}),
        ...(flags.account ? { account: flags.account } : {}),
      };
      submitted = await submitSwarm(scheduler, template, params).catch((err: Error) => {
        throw err instanceof TemplateError || (err instanceof SchedulerError && err.refused) ? new CliError(err.message) : err;
      });
      const expected = flags.nodes * flags.serversPerNode;
      const record: JobRecord = { id: submitted.id, scheduler: flags.scheduler, name, ...(flags.via ? { via: flags.via } : {}), jobDir, scriptPath: submitted.scriptPath, hostfile: submitted.hostfile, template: templatePath, nodes: flags.nodes, serversPerNode: flags.serversPerNode, model: params.model, engine: flags.engine, walltimeSeconds, submittedAt: new Date().toISOString() };
      await saveRecord(record);
      say(`submitted job ${submitted.id} to ${flags.scheduler} on ${opened.host.label}: ${flags.nodes} node(s) × ${flags.serversPerNode} ${flags.engine} server(s), walltime ${humanDuration(walltimeSeconds)}; script ${submitted.scriptPath}`);
      const { job, endpoints } = await waitForServers(scheduler, submitted, {
        expected,
        minFraction: flags.minHealthy / 100,
        intervalMs: flags.interval * 1000,
        signal: stop.signal,
        onState: (j) => say(`job ${j.id}: ${describeJob(j)}`),
        onServers: (n) => say(`job ${submitted!.id}: ${n}/${expected} server(s) up in the hostfile`),
      });
      // The job saw them answer; now they must answer here (through the tunnel with --via): the existing wait.
      swarm = await openSwarm({ ...flags, tag: [], ...(opened.login ? { remoteHostfile: submitted.hostfile } : { hostfile: submitted.hostfile }) }, opened.login ? { login: opened.login } : {});
      const outcome = await waitForHealthy(swarm.pool, { intervalMs: 1000, healthTimeoutMs: flags.healthTimeout * 1000, signal: stop.signal });
      const need = Math.max(1, Math.ceil((flags.minHealthy / 100) * expected));
      if (stop.signal.aborted) throw new DOMException('interrupted', 'AbortError');
      if (outcome.denied) throw new CliError(`${outcome.denied.endpoint} refused our credentials: ${outcome.denied.error ?? ''}; set SWARM_API_KEY to the servers' --api-key`);
      const healthy = swarm.endpoints.filter((e) => outcome.healthy.has(endpointId(e)));
      if (healthy.length < need) throw new CliError(`only ${healthy.length} of ${expected} server(s) healthy here within --health-timeout ${flags.healthTimeout} s (${need} needed)`, EXIT.failed);
      const local = resolve(JOBS_FOLDER, name, 'hostfile.ready');
      await writeFile(local, writeHostfile(healthy));
      ready = true;
      const end = walltimeEnd(job);
      // Runs on this hostfile read when the walltime ends from here (scatter --drain-before).
      await saveRecord(readyRecord(record, job));
      process.stdout.write(`ready: job ${job.id} (${flags.scheduler}), ${healthy.length}/${expected} server(s) healthy (${endpoints.length} listed); hostfile ${local}${end ? `; walltime left ${humanDuration((end.getTime() - Date.now()) / 1000)}` : ''}\n`);
      if (flags.watch) await watch(scheduler, job.id, flags, stop);
    } catch (err) {
      if (submitted && !ready && !flags.keep) {
        await scheduler.cancel(submitted.id).then(
          () => say(`cancelled job ${submitted!.id} (nothing left behind; --keep leaves it)`),
          (e: Error) => say(`could not cancel job ${submitted!.id}: ${e.message}`),
        );
      }
      if (stop.signal.aborted && (err as Error).name === 'AbortError') {
        process.exitCode = exitCode(stop, false);
        return;
      }
      throw err instanceof SchedulerError ? new CliError(err.message, err.refused ? EXIT.badInput : EXIT.failed) : err;
    } finally {
      await swarm?.close();
      await opened.close();
    }
  });
}

/** After ready: follows the job until it ends, warning once before the walltime does. Ctrl-C leaves it running. */
async function watch(scheduler: Scheduler, id: string, flags: LaunchFlags, stop: Stop): Promise<void> {
  let warned = false;
  for (;;) {
    const job = await scheduler.status(id);
    if (!job || isFinished(job.phase)) {
      say(`job ${id} ended: ${job ? describeJob(job) : 'gone from the queue'}`);
      return;
    }
    const end = walltimeEnd(job);
    const left = end ? (end.getTime() - Date.now()) / 1000 : Infinity;
    if (!warned && left <= flags.warnBefore * 60) {
      warned = true;
      say(`warning: job ${id} reaches its walltime in ${humanDuration(left)}: drain its runs now (swarm drain --job ${id}: what is in flight finishes, nothing new is sent), and complete them on the next job with --resume`);
    }
    try {
      await sleep(flags.interval * 1000, undefined, { signal: stop.signal });
    } catch {
      say(`stopped watching; job ${id} keeps running (swarm cancel-job ${id} ends it)`);
      return;
    }
  }
}

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

function words(text: string | undefined): string[] {
  return text?.split(/\s+/).filter(Boolean) ?? [];
}

import { Command, Option } from 'commander';
import { SchedulerError, type SchedulerKind } from '../../core/index.ts';
import { CliError, EXIT } from '../exit.ts';
import { openJobHost, readRecords } from '../job-records.ts';
import { addReachOptions, type ReachFlags } from '../swarm.ts';

/**
 * `swarm cancel-job ID`: ends a scheduler job (scancel / qdel) and every server in it. Named for the
 * job, not `cancel`: a run is cancelled with Ctrl-C (its finished results kept), a job with this.
 */
export function cancelJobCommand(): Command {
  const cmd = new Command('cancel-job')
    .usage('JOB_ID [--scheduler slurm|pbs] [--via [USER@]HOST]')
    .description('cancel a job (scancel / qdel): its servers stop. A job `swarm launch` started from this folder is found by its id; any other needs --scheduler')
    .argument('<job-id>', 'the scheduler\'s job id')
    .addOption(new Option('--scheduler <kind>', 'the batch scheduler (default: the one the job was launched with)').choices(['slurm', 'pbs']));
  addReachOptions(cmd, false);
  return cmd.action(async (id: string, flags: ReachFlags & { scheduler?: SchedulerKind }) => {
    const record = (await readRecords()).find((r) => r.id === id);
    const kind = flags.scheduler ?? record?.scheduler;
    if (!kind) throw new CliError(`job ${id} was not launched from this folder: give --scheduler slurm or pbs`);
    const via = flags.via ?? record?.via;
    const opened = await openJobHost({ ...flags, ...(via ? { via } : {}) });
    try {
      await opened.scheduler(kind).cancel(id);
      process.stderr.write(`cancelled job ${id} (${kind} on ${opened.host.label})\n`);
    } catch (err) {
      throw err instanceof SchedulerError ? new CliError(err.message, err.refused ? EXIT.badInput : EXIT.failed) : err;
    } finally {
      await opened.close();
    }
  });
}

import { Command } from 'commander';
import { SchedulerError } from '../../core/index.ts';
import { CliError, EXIT } from '../exit.ts';
import { describeJob } from '../../core/index.ts';
import { openJobHost, readRecords } from '../job-records.ts';
import { addReachOptions, type ReachFlags } from '../swarm.ts';

/**
 * `swarm jobs`: the jobs `swarm launch` started from this folder, each with what its scheduler says
 * now. A listing, not a watcher: run it again (or `swarm launch --watch`) to follow.
 */
export function jobsCommand(): Command {
  const cmd = new Command('jobs')
    .usage('[--via [USER@]HOST]')
    .description('list the jobs `swarm launch` started from this folder, with their state now (queue position, nodes, walltime left); jobs submitted through --via need the same --via');
  addReachOptions(cmd, false);
  return cmd.action(async (flags: ReachFlags) => {
    const records = await readRecords();
    if (!records.length) {
      process.stderr.write('no jobs launched from this folder (swarm launch starts one)\n');
      return;
    }
    const here = records.filter((r) => r.via === flags.via);
    const opened = here.length ? await openJobHost(flags) : undefined;
    try {
      for (const r of records) {
        const head = `${r.id}\t${r.scheduler}\t${r.name}\t${r.nodes}×${r.serversPerNode} ${r.engine} ${r.model}`;
        if (r.via !== flags.via) {
          process.stdout.write(`${head}\t(submitted ${r.via ? `through ${r.via}: give --via ${r.via}` : 'on this machine: run without --via'})\n`);
          continue;
        }
        const job = await opened!.scheduler(r.scheduler).status(r.id);
        process.stdout.write(`${head}\t${job ? describeJob(job) : 'gone (finished long ago)'}\t${r.hostfile}\n`);
      }
    } catch (err) {
      throw err instanceof SchedulerError ? new CliError(err.message, err.refused ? EXIT.badInput : EXIT.failed) : err;
    } finally {
      await opened?.close();
    }
  });
}

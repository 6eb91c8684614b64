import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import { CliError } from '../exit.ts';
import { activeRuns, DRAIN_SIGNAL, type ActiveRun } from '../active-runs.ts';
import { JOBS_FOLDER, readRecords } from '../job-records.ts';
import { claimStop } from '../interrupt.ts';

/**
 * `swarm drain`: the runs going on from this folder (all, or those on one launched job's hostfile)
 * finish what is in flight and send nothing new; their unsent prompts are kept as cancelled, for
 * `--resume` on the next swarm. It signals them (SIGUSR2, which a run's own process also takes).
 */
export function drainCommand(): Command {
  return new Command('drain')
    .usage('[--job ID] [--wait]')
    .description(`drain the runs going on from this folder (swarm scatter, reduce, …): what is in flight finishes, nothing new is sent, the prompts not sent end cancelled and --resume completes them later (each run also drains on ${DRAIN_SIGNAL})`)
    .option('--job <id>', 'only the runs on the hostfile of this job (one `swarm launch` started from this folder)')
    .option('--wait', 'return once the drained runs have ended')
    .action(async (flags: { job?: string; wait?: boolean }) => {
      let runs = activeRuns();
      if (flags.job) {
        const record = (await readRecords()).find((r) => r.id === flags.job);
        if (!record) throw new CliError(`job ${flags.job} was not launched from this folder (swarm jobs lists those that were)`);
        const folder = resolve(JOBS_FOLDER, record.name);
        runs = runs.filter((r) => r.hostfile && (r.hostfile.startsWith(`${folder}/`) || r.hostfile === record.hostfile));
      }
      if (!runs.length) {
        process.stderr.write(`no run${flags.job ? ` on job ${flags.job}` : ''} is going on from this folder: nothing to drain\n`);
        return;
      }
      for (const run of runs) {
        try {
          process.kill(run.pid, DRAIN_SIGNAL);
        } catch {
          continue; // it ended just now
        }
        process.stderr.write(`draining run ${run.pid} (swarm ${run.argv.join(' ')})\n`);
      }
      if (flags.wait) await waitForEnd(runs);
    });
}

/** Until none of `runs` is going any more (Ctrl-C stops waiting, not the runs). */
async function waitForEnd(runs: readonly ActiveRun[]): Promise<void> {
  const stop = claimStop();
  const pids = new Set(runs.map((r) => r.pid));
  while (activeRuns().some((r) => pids.has(r.pid))) {
    try {
      await sleep(200, undefined, { signal: stop.signal });
    } catch {
      return;
    }
  }
  process.stderr.write(`drained: ${pids.size === 1 ? 'the run has' : `all ${pids.size} runs have`} ended\n`);
}

import { Command } from 'commander';
import { terminalSafe } from '../format.ts';
import { addPlaceOptions, openPlace, type PlaceFlags } from '../detached/detach.ts';
import { checkId, type RunView } from '../detached/here.ts';
import { addLoginOptions } from '../detached/login-options.ts';

interface RunsFlags extends PlaceFlags {
  json?: boolean;
}

export function runsCommand(): Command {
  const cmd = new Command('runs')
    .usage('[RUN] [--via LOGIN] [options]')
    .description('list detached runs (here, or on the login node of --via): state, progress, exit code')
    .argument('[run]', 'only this run')
    .option('--json', 'the runs as JSON (status files as read, with `live`: running, finished, died, …)');
  addLoginOptions(cmd);
  addPlaceOptions(cmd);
  return cmd.action(async (id: string | undefined, flags: RunsFlags) => {
    if (id !== undefined) checkId(id);
    const place = await openPlace(flags);
    try {
      const runs = await place.list(id);
      if (flags.json) return void process.stdout.write(`${JSON.stringify(runs)}\n`);
      if (!runs.length) return void process.stderr.write(`no detached runs on ${place.label}\n`);
      for (const run of runs) process.stdout.write(`${runLine(run)}\n`);
    } finally {
      await place.close();
    }
  });
}

const int = (n: number) => n.toLocaleString('en-US');

/** One line per run: id, state (exit code when finished), counts, wall time, the command. */
export function runLine(run: RunView): string {
  const state = run.live === 'finished' ? `finished (exit ${run.exitCode})` : run.live;
  const counts = `${int(run.done)}/${int(run.total)} · ${int(run.failed)} failed${run.cancelled ? ` · ${int(run.cancelled)} cancelled` : ''}`;
  return terminalSafe(`${run.id}  ${state.padEnd(18)} ${counts} · ${(run.wallMs / 1000).toFixed(1)} s  swarm ${run.command.join(' ')}`);
}

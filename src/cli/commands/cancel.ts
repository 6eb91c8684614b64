import { Command } from 'commander';
import { EXIT } from '../exit.ts';
import { addPlaceOptions, openPlace, resumeCommandOf, type PlaceFlags } from '../detached/detach.ts';
import { checkId } from '../detached/here.ts';
import { addLoginOptions } from '../detached/login-options.ts';
import { runLine } from './runs.ts';

interface CancelFlags extends PlaceFlags {
  json?: boolean;
}

export function cancelCommand(): Command {
  const cmd = new Command('cancel')
    .usage('RUN [--via LOGIN] [options]')
    .description('stop a detached run as Ctrl-C would: every finished result kept, the rest written as cancelled, in input order')
    .argument('<run>', 'the run id (swarm runs lists them)')
    .option('--json', 'the run after cancelling, as JSON');
  addLoginOptions(cmd);
  addPlaceOptions(cmd);
  return cmd.action(async (id: string, flags: CancelFlags) => {
    checkId(id);
    const place = await openPlace(flags);
    try {
      const run = await place.cancel(id);
      if (flags.json) return void process.stdout.write(`${JSON.stringify([run])}\n`);
      process.stderr.write(`${runLine(run)}\n`);
      if (run.live === 'died') {
        const resume = resumeCommandOf(run, flags);
        process.stderr.write(`run ${id} had died before it ended: its finished rows are in ${run.results ?? 'its folder'}.partial${resume ? `; ${resume} completes them` : ''}\n`);
        process.exitCode = EXIT.failed;
      } else if (run.live !== 'finished') {
        process.stderr.write(`run ${id} did not end yet; swarm runs ${id} shows when it has\n`);
        process.exitCode = EXIT.failed;
      } else if (run.results) {
        process.stderr.write(`results (every finished one kept): ${run.results}\n`);
      }
    } finally {
      await place.close();
    }
  });
}

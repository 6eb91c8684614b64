import { Command } from 'commander';
import { blackboard, OrderedJsonlWriter } from '../../core/index.ts';
import { boardText, readBlackboard } from '../blackboard-file.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { addGenerationOptions, addSwarmOptions, runOptions, type GenerationFlags, type SwarmFlags } from '../options.ts';
import { checkOutPath } from '../output.ts';
import { watchRun } from '../progress.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';

interface BlackboardFlags extends SwarmFlags, GenerationFlags, ReachFlags {
  config: string;
  json?: boolean;
  out?: string;
  quiet?: boolean;
}

export function blackboardCommand(): Command {
  const cmd = new Command('blackboard')
    .usage('--hostfile FILE --config FILE [options]')
    .description("Aurora-Swarm's blackboard: rounds in which each section's role= endpoints read the board and add their entries; prints the board")
    .requiredOption('--config <file>', 'JSON: {"sections": [role names], "prompt": "… {section} … {board} …", "maxRounds": 10, "until": "regex an entry matching ends the session"}')
    .option('--json', 'print {board, rounds, snapshots} as JSON')
    .option('--out <file>', 'every entry as JSONL (level = round, input.section)')
    .option('--quiet', 'no progress bar or summary on stderr (warnings still show)');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: BlackboardFlags) => {
    const session = await readBlackboard(flags.config);
    if (flags.out) await checkOutPath(flags.out, [['--config', flags.config], ['--hostfile', flags.hostfile]]);
    const stop = claimStop();
    const swarm = await openUnlessStopped(flags, stop, { select: runOptions(flags) });
    if (!swarm) return;
    const run = blackboard(swarm.pool, session, runOptions(flags));
    const report = await watchRun(run, 'blackboard', Boolean(flags.quiet), stop);
    await swarm.close();
    if (flags.out) {
      const writer = new OrderedJsonlWriter(flags.out);
      for (const r of report.results) writer.add(r);
      await writer.close(report.results.length);
    }
    const outcome = report.outcome;
    if (outcome) process.stdout.write(flags.json ? `${JSON.stringify(outcome)}\n` : `${boardText(outcome.board)}\n`);
    else if (!stop.reason()) process.stderr.write(`error: ${printable(report.error ?? 'no board')}\n`);
    process.exitCode = exitCode(stop, Boolean(outcome) && report.summary.ok > 0);
  });
}

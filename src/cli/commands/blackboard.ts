import { Command } from 'commander';
import { blackboard, boardText } from '../../core/index.ts';
import { readBlackboard } from '../blackboard-file.ts';
import { byEndpoint } from '../failures.ts';
import { addGenerationOptions, addSwarmOptions, runOptions } from '../options.ts';
import { runPattern, type PatternFlags } from '../pattern-run.ts';
import { addDetachOptions } from '../detached/detach.ts';
import { addReachOptions } from '../swarm.ts';
import { addDrainBeforeOption } from '../job-run.ts';

interface BlackboardFlags extends PatternFlags {
  config: string;
}

export function blackboardCommand(): Command {
  const cmd = new Command('blackboard')
    .usage('--hostfile FILE --config FILE [options]')
    .description("Aurora-Swarm's blackboard: rounds in which each section's role= endpoints read the board and add their entries; prints the board")
    .requiredOption('--config <file>', 'JSON or YAML (.yaml, .yml): {"sections": [role names], "prompt": "… {section} … {board} …", "maxRounds": 10, "until": "regex an entry matching ends the session"}')
    .option('--json', 'print {board, rounds, snapshots} as JSON')
    .option('--out <file>', 'every entry as JSONL (level = round, input.section)')
    .option('--quiet', 'no progress bar or summary on stderr (warnings still show)');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addDetachOptions(cmd);
  addDrainBeforeOption(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: BlackboardFlags) => {
    const session = await readBlackboard(flags.config);
    await runPattern(flags, {
      command: 'blackboard',
      label: 'blackboard',
      input: ['--config', flags.config],
      start: (pool) => blackboard(pool, session, runOptions(flags)),
      text: (outcome) => boardText(outcome.board),
      place: (r) => ({ step: `round ${r.level} · ${String(r.input.section)}`, which: byEndpoint(r) }),
    });
  });
}

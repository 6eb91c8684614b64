import { Command } from 'commander';
import { pipeline } from '../../core/index.ts';
import { byEndpoint } from '../failures.ts';
import { addGenerationOptions, addSwarmOptions, runOptions } from '../options.ts';
import { runPattern, type PatternFlags } from '../pattern-run.ts';
import { readStages } from '../stages-file.ts';
import { addDetachOptions } from '../detached/detach.ts';
import { addReachOptions } from '../swarm.ts';
import { addDrainBeforeOption } from '../job-run.ts';

interface PipelineFlags extends PatternFlags {
  stages: string;
  input: string;
  consecutive?: boolean;
}

export function pipelineCommand(): Command {
  const cmd = new Command('pipeline')
    .usage('--hostfile FILE --stages FILE --input TEXT [options]')
    .description("Aurora-Swarm's pipeline: each stage asks its agents its template with {input} the previous stage's output (the first stage's: --input); prints the last output")
    .requiredOption('--stages <file>', 'JSON or YAML (.yaml, .yml) list of stages: {"name", "template" (with {input}), "agents", "keep" (regex an answer must match), "transform" (vote, concat, best-of, top-k, merge, stats; default: the answers joined by newlines)}')
    .requiredOption('--input <text>', "the first stage's {input}")
    .option('--consecutive', 'each stage takes the next endpoints (a consecutive slice) instead of the first ones')
    .option('--json', 'print {output, stages} as JSON')
    .option('--out <file>', 'every agent answer of every stage as JSONL (level = stage index)')
    .option('--quiet', 'no progress bar or summary on stderr (warnings still show)');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addDetachOptions(cmd);
  addDrainBeforeOption(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: PipelineFlags) => {
    const stages = await readStages(flags.stages);
    await runPattern(flags, {
      command: 'pipeline',
      label: 'pipeline',
      input: ['--stages', flags.stages],
      start: (pool) => pipeline(pool, { stages, input: flags.input, reuseAgents: !flags.consecutive }, runOptions(flags)),
      text: (outcome) => (typeof outcome.output === 'string' ? outcome.output : JSON.stringify(outcome.output)),
      place: (r) => ({ step: `stage ${(r.level ?? 0) + 1} · ${String(r.input.stage)}`, which: byEndpoint(r) }),
    });
  });
}

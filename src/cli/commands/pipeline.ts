import { Command } from 'commander';
import { OrderedJsonlWriter, pipeline } from '../../core/index.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { addGenerationOptions, addSwarmOptions, runOptions, type GenerationFlags, type SwarmFlags } from '../options.ts';
import { checkOutPath } from '../output.ts';
import { watchRun } from '../progress.ts';
import { readStages } from '../stages-file.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';

interface PipelineFlags extends SwarmFlags, GenerationFlags, ReachFlags {
  stages: string;
  input: string;
  consecutive?: boolean;
  json?: boolean;
  out?: string;
  quiet?: boolean;
}

export function pipelineCommand(): Command {
  const cmd = new Command('pipeline')
    .usage('--hostfile FILE --stages FILE --input TEXT [options]')
    .description("Aurora-Swarm's pipeline: each stage asks its agents its template with {input} the previous stage's output (the first stage's: --input); prints the last output")
    .requiredOption('--stages <file>', 'JSON list of stages: {"name", "template" (with {input}), "agents", "keep" (regex an answer must match), "transform" (vote, concat, best-of, top-k, merge, stats; default: the answers joined by newlines)}')
    .requiredOption('--input <text>', "the first stage's {input}")
    .option('--consecutive', 'each stage takes the next endpoints (a consecutive slice) instead of the first ones')
    .option('--json', 'print {output, stages} as JSON')
    .option('--out <file>', 'every agent answer of every stage as JSONL (level = stage index)')
    .option('--quiet', 'no progress bar or summary on stderr (warnings still show)');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: PipelineFlags) => {
    const stages = await readStages(flags.stages);
    if (flags.out) await checkOutPath(flags.out, [['--stages', flags.stages], ['--hostfile', flags.hostfile]]);
    const stop = claimStop();
    const swarm = await openUnlessStopped(flags, stop, { select: runOptions(flags) });
    if (!swarm) return;
    const run = pipeline(swarm.pool, { stages, input: flags.input, reuseAgents: !flags.consecutive }, runOptions(flags));
    const report = await watchRun(run, 'pipeline', Boolean(flags.quiet), stop);
    await swarm.close();
    if (flags.out) {
      const writer = new OrderedJsonlWriter(flags.out);
      for (const r of report.results) writer.add(r);
      await writer.close(report.results.length);
    }
    const outcome = report.outcome;
    if (outcome) {
      const text = typeof outcome.output === 'string' ? outcome.output : JSON.stringify(outcome.output);
      process.stdout.write(flags.json ? `${JSON.stringify(outcome)}\n` : `${text}\n`);
    } else if (!stop.reason()) process.stderr.write(`error: ${printable(report.error ?? 'no output')}\n`);
    process.exitCode = exitCode(stop, Boolean(outcome) && report.summary.ok > 0);
  });
}

import { Command } from 'commander';
import { loadPrompts, OrderedJsonlWriter, PromptFileError, scatterGather } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { checkOutPath, writeAllCancelled } from '../output.ts';
import { addGenerationOptions, addSwarmOptions, runOptions, type GenerationFlags, type SwarmFlags } from '../options.ts';
import { watchRun } from '../progress.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';

interface ScatterFlags extends SwarmFlags, GenerationFlags, ReachFlags {
  prompts: string;
  batch: boolean;
  out?: string;
  quiet?: boolean;
}

export function scatterCommand(): Command {
  const cmd = new Command('scatter')
    .usage('--hostfile FILE --prompts FILE [options]')
    .description('send every prompt to the swarm (prompt i → endpoint i % n) and write one result per prompt, in input order')
    .requiredOption('--prompts <file>', '.jsonl ({"prompt": …} per line; other fields go to `input`) or text (one prompt per non-blank line)')
    .option('--batch', "batch prompting: one /v1/completions request per endpoint with its list of prompts", true)
    .option('--no-batch', 'one /v1/chat/completions request per prompt')
    .option('--out <file>', 'results JSONL (default: stdout)')
    .option('--quiet', 'no progress bar or summary on stderr (warnings still show)');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: ScatterFlags) => {
    const stop = claimStop(); // from here on, Ctrl-C leaves a complete results file
    const prompts = await loadPrompts(flags.prompts).catch((err: unknown) => {
      throw err instanceof PromptFileError ? new CliError(err.message) : err;
    });
    if (flags.out) await checkOutPath(flags.out, [['--prompts', flags.prompts], ['--hostfile', flags.hostfile]]);
    const swarm = await openUnlessStopped(flags, stop, { select: runOptions(flags) }, () => writeAllCancelled(flags.out, prompts));
    if (!swarm) return;
    const run = scatterGather(swarm.pool, prompts, { ...runOptions(flags), batch: flags.batch });
    const writer = new OrderedJsonlWriter(flags.out);
    run.on('result', (r) => writer.add(r));
    const report = await watchRun(run, flags.batch ? 'batched' : 'individual', Boolean(flags.quiet), stop);
    if (flags.out || stop.reason() !== 'stdout-closed') await writer.close();
    await swarm.close();
    if (report.error && !report.cancelled) process.stderr.write(`error: ${printable(report.error)}\n`);
    process.exitCode = exitCode(stop, report.summary.ok === report.summary.prompts);
  });
}

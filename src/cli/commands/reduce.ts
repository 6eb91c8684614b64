import { Command } from 'commander';
import { checkTreeReduce, loadPrompts, PromptFileError, treeReduce } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { addGenerationOptions, addSwarmOptions, int, narrowed, runOptions, type GenerationFlags, type SwarmFlags } from '../options.ts';
import { watchRun } from '../progress.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';

interface ReduceFlags extends SwarmFlags, GenerationFlags, ReachFlags {
  prompt: string;
  reducePrompt: string;
  items?: string;
  fanin: number;
  json?: boolean;
  quiet?: boolean;
}

export function reduceCommand(): Command {
  const cmd = new Command('reduce')
    .usage('--hostfile FILE --prompt TEXT --reduce-prompt TEXT [options]')
    .description('tree-reduce: leaf answers, then rounds merging --fanin answers at a time until one is left; prints the final text')
    .requiredOption('--prompt <text>', 'leaf prompt; with --items, {item} takes each item')
    .requiredOption('--reduce-prompt <text>', 'merge prompt: {responses} takes the answers (joined by ---), {level} the round')
    .option('--items <file>', 'one item per non-blank line (or JSONL with a "prompt" field); without it the prompt is broadcast to every endpoint')
    .option('--fanin <k>', 'answers merged per reduce prompt', int('--fanin', 2, 1_000), 50)
    .option('--json', 'print {text, levels} as JSON')
    .option('--quiet', 'no progress bar or summary on stderr (warnings still show)');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: ReduceFlags) => {
    const input = { prompt: flags.prompt, reducePrompt: flags.reducePrompt, fanin: flags.fanin };
    try {
      checkTreeReduce(input);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
    const stop = claimStop();
    const items = flags.items ? await readItems(flags.items) : undefined;
    const swarm = await openUnlessStopped(flags, stop, { select: runOptions(flags) });
    if (!swarm) return;
    const run = treeReduce(narrowed(swarm.pool, flags), { ...input, ...(items ? { items } : {}) }, runOptions(flags));
    const report = await watchRun(run, 'tree-reduce', Boolean(flags.quiet), stop);
    await swarm.close();
    const outcome = report.outcome;
    if (outcome) process.stdout.write(flags.json ? `${JSON.stringify(outcome)}\n` : `${outcome.text}\n`);
    else if (!stop.reason()) process.stderr.write(`error: ${printable(report.error ?? 'no answer')}\n`);
    process.exitCode = exitCode(stop, Boolean(outcome));
  });
}

async function readItems(path: string): Promise<string[]> {
  const items = await loadPrompts(path, 'items').catch((err: unknown) => {
    throw err instanceof PromptFileError ? new CliError(err.message) : err;
  });
  return items.map((p) => p.prompt);
}

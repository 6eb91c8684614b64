import { Command } from 'commander';
import { checkTreeReduce, loadPrompts, PromptFileError, treeReduce, type PromptResult } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { byEndpoint } from '../failures.ts';
import { addGenerationOptions, addSwarmOptions, int, runOptions } from '../options.ts';
import { runPattern, type PatternFlags } from '../pattern-run.ts';
import { addDetachOptions } from '../detached/detach.ts';
import { addReachOptions } from '../swarm.ts';

interface ReduceFlags extends PatternFlags {
  prompt: string;
  reducePrompt: string;
  items?: string;
  fanin: number;
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
    .option('--out <file>', 'every answer of every level as JSONL (level 0 the leaves)')
    .option('--quiet', 'no progress bar or summary on stderr (warnings still show)');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addDetachOptions(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: ReduceFlags) => {
    const input = { prompt: flags.prompt, reducePrompt: flags.reducePrompt, fanin: flags.fanin };
    try {
      checkTreeReduce(input);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
    const items = flags.items ? await readItems(flags.items) : undefined;
    await runPattern(flags, {
      command: 'reduce',
      label: 'tree-reduce',
      input: ['--items', flags.items],
      start: (pool) => treeReduce(pool, { ...input, ...(items ? { items } : {}) }, runOptions(flags)),
      text: (outcome) => outcome.text,
      place: reducePlace,
    });
  });
}

/** Leaves are items (by number and text) or endpoints; each later level merges groups of answers. */
function reducePlace(r: PromptResult): { step: string; which: string } {
  if (r.level) return { step: `level ${r.level} (merges)`, which: `group ${Number(r.input.group) + 1}` };
  const item = r.input.item;
  if (item === undefined) return { step: 'leaves', which: byEndpoint(r) };
  const text = String(item);
  return { step: 'leaves (items)', which: `item ${r.index + 1} ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)}` };
}

async function readItems(path: string): Promise<string[]> {
  const items = await loadPrompts(path, 'items').catch((err: unknown) => {
    throw err instanceof PromptFileError ? new CliError(err.message) : err;
  });
  return items.toArray().map((p) => p.prompt);
}

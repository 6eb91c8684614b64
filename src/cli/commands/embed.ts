import { Command } from 'commander';
import { embedAll, loadPrompts, OrderedJsonlWriter, PromptFileError, type PromptInput } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { claimResults, shownRow, writeAllCancelled } from '../output.ts';
import { addSwarmOptions, narrowed, type SwarmFlags } from '../options.ts';
import { watchRun } from '../progress.ts';
import { addDetachOptions, detach, type DetachFlags } from '../detached/detach.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';

interface EmbedFlags extends SwarmFlags, ReachFlags, DetachFlags {
  prompts: string;
  out?: string;
  quiet?: boolean;
}

export function embedCommand(): Command {
  const cmd = new Command('embed')
    .description('embed every input on the embedding servers (/v1/embeddings lists, input i → endpoint i % n) and write one row per input, in input order, with its `embedding`; without --model or --tag, endpoints tagged role=embed are used if the hostfile has any')
    .requiredOption('--prompts <file>', 'inputs: .jsonl ({"prompt": …} per line) or text (one per non-blank line)')
    .option('--out <file>', 'results JSONL (default: stdout)')
    .option('--quiet', 'no progress bar or summary on stderr (warnings still show)');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addDetachOptions(cmd);
  return cmd.action(async (flags: EmbedFlags) => {
    if (flags.detach) return detach('embed', flags);
    let inputs: PromptInput[];
    try {
      inputs = (await loadPrompts(flags.prompts)).toArray();
    } catch (err) {
      throw err instanceof PromptFileError ? new CliError(err.message) : err;
    }
    const lock = flags.out ? await claimResults(flags.out, [['--prompts', flags.prompts], ['--hostfile', flags.hostfile]], { flag: '--out' }) : undefined;
    const stop = claimStop();
    let run: ReturnType<typeof embedAll> | undefined;
    // Made once the swarm is open, so bad input leaves no file behind; a failed write stops the run.
    const newWriter = () => new OrderedJsonlWriter({ ...(flags.out ? { path: flags.out } : {}), ...(lock ? { lock } : {}), show: shownRow, onFailure: () => run?.cancel() });
    const swarm = await openUnlessStopped(flags, stop, {}, () => writeAllCancelled(newWriter(), inputs, inputs.length));
    if (!swarm) return;
    const writer = newWriter();
    run = embedAll(narrowed(swarm.pool, flags), inputs, { tags: flags.tag, keepResults: false, ...(flags.model ? { model: flags.model } : {}) });
    run.on('result', (r) => writer.add(r));
    const report = await watchRun(run, 'embeddings', Boolean(flags.quiet), stop);
    await swarm.close();
    if (report.error && !report.cancelled) process.stderr.write(`error: ${printable(report.error)}\n`);
    if (flags.out || stop.reason() !== 'stdout-closed') {
      await writer.close(inputs.length).catch((err: unknown) => {
        throw new CliError(`error: ${(err as Error).message}`, exitCode(stop, false));
      });
    }
    process.exitCode = exitCode(stop, report.summary.ok === inputs.length);
  });
}

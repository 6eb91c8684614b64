import { Command } from 'commander';
import {
  loadPrompts,
  OrderedJsonlWriter,
  planResume,
  planRetryFailed,
  PromptFileError,
  ResumeError,
  scatterGather,
  type ResumePlan,
} from '../../core/index.ts';
import { loadTemplateFile, TemplateFileError, type TemplatePath, type TemplateSetting } from '../../core/templating/index.ts';
import { CliError } from '../exit.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { checkOutPath, writeAllCancelled } from '../output.ts';
import { addGenerationOptions, addSwarmOptions, narrowed, runOptions, templateFlag, type GenerationFlags, type SwarmFlags, type TemplateFlag } from '../options.ts';
import { watchRun } from '../progress.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';

interface ScatterFlags extends SwarmFlags, GenerationFlags, ReachFlags {
  prompts?: string;
  batch: boolean;
  stream?: boolean;
  out?: string;
  resume?: string;
  retryFailed?: string;
  quiet?: boolean;
  template?: TemplateFlag;
}

export function scatterCommand(): Command {
  const cmd = new Command('scatter')
    .usage('--hostfile FILE --prompts FILE [options]')
    .description('send every prompt to the swarm (prompt i → endpoint i % n) and write one result per prompt, in input order')
    .option('--prompts <file>', '.jsonl ({"prompt": …} per line; other fields go to `input`) or text (one prompt per non-blank line)')
    .option('--batch', "batch prompting: one /v1/completions request per endpoint with its list of prompts", true)
    .option('--no-batch', 'one /v1/chat/completions request per prompt')
    .option(
      '--template <how>',
      "batches and the chat template: server (render through the endpoints' /tokenize, send token ids), file:PATH (render here from a tokenizer_config.json or .jinja), none (raw text); default: server where the endpoints render, else none with a warning",
      templateFlag,
    )
    .option('--stream', 'stream answers: each prompt is final at its finish_reason; TTFT, TPOT and ITL in the summary')
    .option('--out <file>', 'results JSONL (default: stdout); rows reach it as they finish and it is in input order at the end')
    .option('--resume <file>', 'complete this results file: prompts that succeeded there (same index and prompt) are skipped')
    .option('--retry-failed <file>', 'send again only the failed and cancelled rows of this results file (its rows carry their prompts)')
    .option('--quiet', 'no progress bar or summary on stderr (warnings still show)');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: ScatterFlags) => {
    const stop = claimStop(); // from here on, Ctrl-C leaves a complete results file
    const plan = await planOf(flags);
    const template = await templateOf(flags);
    const out = flags.resume ?? flags.retryFailed ?? flags.out;
    if (flags.out) await checkOutPath(flags.out, [['--prompts', flags.prompts], ['--hostfile', flags.hostfile]]);
    const continued = plan.keep.length ? { rows: plan.keep, size: plan.size } : undefined;
    const writer = new OrderedJsonlWriter(out, (i) => plan.todo[i]!, process.stdout, continued);
    const todo = plan.todo.map((i) => plan.prompts[i]!);
    let allOk = true;
    if (todo.length) {
      const options = { ...runOptions(flags), ...(template ? { template } : {}) };
      const swarm = await openUnlessStopped(flags, stop, { select: options }, () => writeAllCancelled(writer, todo, plan.prompts.length));
      if (!swarm) return;
      const run = scatterGather(narrowed(swarm.pool, flags), todo, { ...options, batch: flags.batch, stream: Boolean(flags.stream), keepResults: false });
      const paths = new Map<TemplatePath, number>();
      run.on('result', (r) => {
        if (r.template) paths.set(r.template, (paths.get(r.template) ?? 0) + 1);
        writer.add(r);
      });
      const report = await watchRun(run, `${flags.batch ? 'batched' : 'individual'}${flags.stream ? ' streamed' : ''}`, Boolean(flags.quiet), stop);
      await swarm.close();
      // Which path each prompt took to the chat template; what it cost is in the summary's requests by path.
      if (flags.batch && !flags.quiet && paths.size) process.stderr.write(`chat template: ${[...paths].map(([path, n]) => `${path} (${n} prompts)`).join(', ')}\n`);
      allOk = report.summary.ok === report.summary.prompts;
      if (report.error && !report.cancelled) process.stderr.write(`error: ${printable(report.error)}\n`);
    } else if (!flags.quiet) process.stderr.write(`every prompt already succeeded in ${printable(out!)}: nothing to send\n`);
    // Never exit 0 unless exactly one row per prompt was written (stdout's reader may have left early).
    if (out || stop.reason() !== 'stdout-closed') {
      await writer.close(plan.prompts.length).catch((err: unknown) => {
        throw new CliError(`error: ${(err as Error).message}`, exitCode(stop, false));
      });
    }
    process.exitCode = exitCode(stop, allOk);
  });
}

/** The batches' template setting; a template file is read now so a bad one stops the command before any request (exit 2). */
async function templateOf(flags: ScatterFlags): Promise<TemplateSetting | undefined> {
  if (!flags.batch) {
    if (flags.template) throw new CliError('--template applies to batches (individual chat requests always use the server\'s template); drop it or --no-batch');
    return undefined;
  }
  const flag = flags.template ?? 'auto';
  if (typeof flag === 'string') return flag;
  try {
    return await loadTemplateFile(flag.file);
  } catch (err) {
    throw err instanceof TemplateFileError ? new CliError(err.message) : err;
  }
}

/** Which prompts to send: all of them, or what an earlier results file still lacks. Bad input throws CliError (exit 2). */
async function planOf(flags: ScatterFlags): Promise<ResumePlan> {
  const given = [flags.resume && '--resume', flags.retryFailed && '--retry-failed'].filter(Boolean);
  if (given.length > 1) throw new CliError('give one of --resume and --retry-failed');
  if (given.length && flags.out) throw new CliError(`${given[0]} completes its own file; drop --out`);
  if (flags.retryFailed && flags.prompts) throw new CliError('--retry-failed reads the prompts from the results file; drop --prompts');
  if (!flags.retryFailed && !flags.prompts) throw new CliError("required option '--prompts <file>' not specified");
  try {
    if (flags.retryFailed) return planRetryFailed(flags.retryFailed);
    const prompts = await loadPrompts(flags.prompts!);
    if (flags.resume) return planResume(flags.resume, prompts);
    return { prompts, todo: prompts.map((_, i) => i), keep: [], size: 0 };
  } catch (err) {
    throw err instanceof PromptFileError || err instanceof ResumeError ? new CliError(err.message) : err;
  }
}

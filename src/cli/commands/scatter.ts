import { Command } from 'commander';
import {
  askVersions,
  loadPrompts,
  OrderedJsonlWriter,
  planResume,
  planRetryFailed,
  promptsAt,
  PromptFileError,
  ResultsFileError,
  ResumeError,
  scatterGather,
  serverContext,
  writeServerContext,
  type ServerContext,
  type ResultsLock,
  type ResumePlan,
  type PromptList,
} from '../../core/index.ts';
import { loadTemplateFile, TemplateFileError, type TemplatePath, type TemplateSetting } from '../../core/templating/index.ts';
import { CliError } from '../exit.ts';
import { addDrainBeforeOption, jobOfRun, jobStopLine, jobWatch, type JobRunFlags } from '../job-run.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { claimResults, shownRow, writeAllCancelled } from '../output.ts';
import { addGenerationOptions, addSwarmOptions, narrowed, runOptions, templateFlag, type GenerationFlags, type SwarmFlags, type TemplateFlag } from '../options.ts';
import { watchRun } from '../progress.ts';
import { addDetachOptions, detach, type DetachFlags } from '../detached/detach.ts';
import { resumeCommandOfThisRun } from '../detached/spec.ts';
import { addShardOptions, shardInput, shardPlan, writeShardInfo, type ShardFlags, type ShardPlan } from '../shard-flags.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';

interface ScatterFlags extends SwarmFlags, GenerationFlags, ReachFlags, DetachFlags, ShardFlags, JobRunFlags {
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
  addDrainBeforeOption(cmd);
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addDetachOptions(cmd);
  addShardOptions(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: ScatterFlags) => {
    if (flags.detach) return detach('scatter', flags);
    const job = await jobOfRun(flags);
    const stop = claimStop(); // from here on, Ctrl-C leaves a complete results file
    const sharded = await shardPlan(flags); // a shard writes its own file: --out and --resume now name it
    const out = flags.resume ?? flags.retryFailed ?? flags.out;
    const { plan, lock } = await planOf(flags, sharded);
    const template = await templateOf(flags);
    const todo = promptsAt(plan.prompts, plan.todo);
    let run: ReturnType<typeof scatterGather> | undefined;
    // Made once the swarm is open, so bad input leaves no file behind; a failed write stops the run.
    const newWriter = () =>
      new OrderedJsonlWriter({
        ...(out ? { path: out } : {}),
        indexOf: (i) => plan.todo[i]!,
        ...(flags.resume || flags.retryFailed ? { continued: plan.continued } : {}),
        ...(lock ? { lock } : {}),
        show: shownRow,
        onFailure: () => run?.cancel(),
      });
    let writer: OrderedJsonlWriter | undefined;
    let context: ServerContext[] | undefined;
    let allOk = true;
    if (todo.length) {
      const options = { ...runOptions(flags), ...(template ? { template } : {}) };
      const swarm = await openUnlessStopped(flags, stop, { select: options, ...(sharded ? { only: sharded.only } : {}) }, () => writeAllCancelled((writer = newWriter()), todo, plan.prompts.length));
      if (!swarm) return;
      writer = newWriter();
      const rows = writer;
      run = scatterGather(narrowed(swarm.pool, flags), todo, { ...options, batch: flags.batch, stream: Boolean(flags.stream), keepResults: false });
      // What answered — each endpoint's /version, models and max_model_len — asked as the run starts (and counted with it), written beside its results.
      const versions = out ? askVersions(swarm.pool, run) : undefined;
      const paths = new Map<TemplatePath, number>();
      run.on('result', (r) => {
        if (r.template) paths.set(r.template, (paths.get(r.template) ?? 0) + 1);
        rows.add(r);
      });
      const report = await watchRun(run, `${flags.batch ? 'batched' : 'individual'}${flags.stream ? ' streamed' : ''}`, Boolean(flags.quiet), stop, jobWatch(flags, job, swarm));
      if (versions && !stop.reason()) context = serverContext(swarm.pool, await versions);
      await swarm.close();
      // Which path each prompt took to the chat template; what it cost is in the summary's requests by path.
      if (flags.batch && !flags.quiet && paths.size) process.stderr.write(`chat template: ${[...paths].map(([path, n]) => `${path} (${n} prompts)`).join(', ')}\n`);
      allOk = report.summary.ok === report.summary.prompts;
      const detached = resumeCommandOfThisRun();
      const again = detached ? `${detached} --hostfile <the next swarm's>` : out ? `swarm scatter --resume ${out} --prompts ${flags.prompts ?? out} --hostfile <the next swarm's>` : 'write them with --out to resume';
      const stoppedByJob = jobStopLine(report, again);
      if (report.drained) {
        process.stderr.write(`drained: ${report.summary.cancelled.toLocaleString('en-US')} prompt(s) not sent; complete them with ${printable(again)}\n`);
      } else if (stoppedByJob) {
        process.stderr.write(`${stoppedByJob}\n`);
      } else if (report.error && !report.cancelled) process.stderr.write(`error: ${printable(report.error)}\n`);
    } else {
      writer = newWriter();
      // (A shard whose endpoints come after the last prompt owns none: its file is empty, and whole.)
      const why = plan.prompts.length ? `every prompt already succeeded in ${printable(out!)}` : 'this shard owns no prompt (more endpoints than prompts)';
      if (!flags.quiet) process.stderr.write(`${why}: nothing to send\n`);
    }
    // Never exit 0 unless exactly one row per prompt is in the file on disk (stdout's reader may have left early).
    if (out || stop.reason() !== 'stdout-closed') {
      await writer.close(plan.prompts.length).catch((err: unknown) => {
        const again = flags.retryFailed ? `--retry-failed ${out}` : `--resume ${out} --prompts ${flags.prompts}`;
        const hint = err instanceof ResultsFileError && err.kept ? `; once that is mended, swarm scatter ${again} completes it` : '';
        throw new CliError(`error: ${(err as Error).message}${hint}`, exitCode(stop, false));
      });
    }
    // The results first: what answered them is written beside them only once they are whole on disk.
    if (context) await writeServerContext(out!, context).catch((err: unknown) => process.stderr.write(`warning: the server context was not written beside the results: ${printable((err as Error).message)}\n`));
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

/**
 * Which prompts to send: all of them, or what an earlier results file still lacks; and the lock on
 * the results file, taken before that file is read. Bad input throws CliError (exit 2), touching nothing.
 */
async function planOf(flags: ScatterFlags, sharded: ShardPlan | undefined): Promise<{ plan: ResumePlan<PromptList>; lock: ResultsLock | undefined }> {
  const given = [flags.resume && '--resume', flags.retryFailed && '--retry-failed'].filter(Boolean);
  if (given.length > 1) throw new CliError('give one of --resume and --retry-failed');
  if (given.length && flags.out) throw new CliError(`${given[0]} completes its own file; drop --out`);
  if (flags.retryFailed && flags.prompts) throw new CliError('--retry-failed reads the prompts from the results file; drop --prompts');
  if (!flags.retryFailed && !flags.prompts) throw new CliError("required option '--prompts <file>' not specified");
  const inputs: Array<[string, string | undefined]> = [['--prompts', flags.prompts], ['--hostfile', flags.hostfile]];
  let lock: ResultsLock | undefined;
  try {
    const all = flags.prompts ? await loadPrompts(flags.prompts) : [];
    // A shard's run is its own prompts, in input order: its file, its resume, as any run's.
    const shard = sharded && flags.prompts ? await shardInput(sharded, all, flags.prompts) : undefined;
    const prompts = shard ? shard.prompts : all;
    const out = flags.resume ?? flags.retryFailed ?? flags.out;
    const again = shard ? `--resume ${flags.resume ?? flags.out} --prompts ${flags.prompts} --shards ${shard.info.shards} --shard ${shard.info.rank}`.replace(/\.shard-\d+-of-\d+/, '') : `--resume ${out} --prompts ${flags.prompts}`;
    if (out) lock = await claimResults(out, inputs, { flag: given[0] || '--out', continues: given.length > 0, unfinished: `complete it with ${again}, or delete it` });
    if (shard) writeShardInfo(out!, shard.info);
    if (flags.retryFailed) return { plan: planRetryFailed(flags.retryFailed), lock };
    if (flags.resume) return { plan: planResume(flags.resume, prompts, flags.prompts), lock };
    return { plan: { prompts, todo: Array.from({ length: prompts.length }, (_, i) => i), continued: { rows: [], partialSize: 0, finalSize: 0 } }, lock };
  } catch (err) {
    lock?.release();
    throw err instanceof PromptFileError || err instanceof ResumeError ? new CliError(err.message) : err;
  }
}

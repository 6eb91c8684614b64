import { appendFile, copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Command } from 'commander';
import {
  arrivalGaps,
  clientOverheadLines,
  FitError,
  LIVE_READINGS,
  fitLatencyModel,
  loadPrompts,
  loadRequests,
  matchedConcurrency,
  measureClient,
  newRunId,
  OrderedJsonlWriter,
  predictWall,
  type PredictedRun,
  PromptFileError,
  recordServerLoad,
  scatterGather,
  subpool,
  sustainedLoad,
  sweepCsv,
  sweepRows,
  syntheticPrompt,
  type PromptInput,
  type PromptResult,
  type Run,
  type RunOptions,
  type RunSummary,
  type Scenario,
  type SwarmPool,
  type SweepRow,
} from '../../core/index.ts';
import { mulberry32 } from '../../sim/random.ts';
import { CliError } from '../exit.ts';
import { readExperiment, type Experiment } from '../experiment-file.ts';
import { columns, printable } from '../format.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { int, narrowed } from '../options.ts';
import { watchRun } from '../progress.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';
import { jobOfRun, jobStopLine, jobWatch } from '../job-run.ts';

interface RunFlags extends ReachFlags {
  out?: string;
  maxNumSeqs?: number;
  quiet?: boolean;
}

/** One run of an experiment: a sweep value (or none), an arm, a repetition. */
interface Point {
  value: number | undefined;
  arm: Experiment['arms'][number];
  repetition: number;
}

export function runExperimentCommand(): Command {
  const cmd = new Command('run')
    .usage('FILE.swarm.yaml [--out DIR] [options]')
    .description('run an experiment file (*.swarm.yaml): its pattern over its prompts and endpoints, each arm and sweep value repeated; a table of the metric against the swarm parameter (median and IQR over repetitions), saved with every run, its results and the file it came from')
    .argument('<file>', 'the experiment file (YAML or JSON)')
    .option('--out <dir>', 'where the runs go (default: <file>.runs/<run id>)')
    .option('--max-num-seqs <k>', "the servers' --max-num-seqs, unless the file's endpoints.max_num_seqs says: the individual arm's matched in flight, and the planner's fit (default 256)", int('--max-num-seqs', 1, 65_536))
    .option('--quiet', 'no progress bars or per-run summaries on stderr');
  addReachOptions(cmd);
  return cmd.action(async (file: string, flags: RunFlags) => {
    const exp = await readExperiment(file);
    const prompts = await promptsOf(exp);
    const folder = flags.out ?? join(`${file.replace(/\.swarm\.ya?ml$|\.ya?ml$|\.json$/i, '')}.runs`, newRunId());
    const job = await jobOfRun({ hostfile: exp.hostfile });
    const stop = claimStop();
    const points = pointsOf(exp);
    const needed = Math.max(exp.concurrency ?? 512, ...(exp.sweep?.parameter === 'concurrency' ? exp.sweep.values : []));
    const maxNumSeqs = exp.maxNumSeqs ?? flags.maxNumSeqs;
    const flagsForPool = { ...flags, ...(maxNumSeqs ? { maxNumSeqs } : {}), hostfile: exp.hostfile, tag: exp.tags, concurrency: needed, ...(exp.model ? { model: exp.model } : {}), hedge: exp.pattern !== 'load', stop: [], param: {}, tokenIds: true };
    const options: RunOptions = { tags: exp.tags, ...(exp.model ? { model: exp.model } : {}), ...exp.sampling };
    const swarm = await openUnlessStopped(flagsForPool, stop, { select: options });
    if (!swarm) return;
    const tagged = narrowed(swarm.pool, { tag: exp.tags });
    const most = exp.sweep?.parameter === 'endpoints' ? exp.sweep.values.reduce((m, v) => Math.max(m, v), 0) : 0;
    if (most > tagged.endpoints.length) {
      await swarm.close();
      throw new CliError(`${printable(file)}: sweep.values: ${most} endpoints asked for, ${printable(exp.hostfile)} has ${tagged.endpoints.length}${exp.tags.length ? ' with those tags' : ''}`);
    }
    // Made once the input is checked, so bad input leaves nothing behind.
    await mkdir(join(folder, 'runs'), { recursive: true }).catch(async (err: NodeJS.ErrnoException) => {
      await swarm.close();
      throw new CliError(`--out ${printable(folder)}: cannot make it (${err.code ?? err.message})`);
    });
    // The file the runs came from, byte for byte: any run here can be made again from it.
    await copyFile(file, join(folder, basename(file)));
    const summaries = new Map<string, RunSummary[]>();
    const finished: Done[] = [];
    let allOk = true;
    for (const [n, point] of points.entries()) {
      if (stop.reason()) break;
      const label = `${exp.sweep ? `${exp.sweep.parameter}=${point.value} ` : ''}${point.arm} #${point.repetition + 1}`;
      if (!flags.quiet) process.stderr.write(`run ${n + 1}/${points.length}: ${label}\n`);
      const { run, pool, scenario } = start(exp, point, tagged, prompts, options);
      const name = `${point.value ?? 'all'}-${point.arm}-${point.repetition + 1}`;
      const writer = new OrderedJsonlWriter({ path: join(folder, 'runs', `${name}.jsonl`), onFailure: () => run.cancel() });
      run.on('result', (r) => writer.add(r));
      // The servers' own figures beside the client's, and what the client itself spent. Each reading also
      // goes to runs/NAME.live.jsonl as it comes, for a view drawing them during the run; the record replaces it.
      const live = join(folder, 'runs', `${name}${LIVE_READINGS}`);
      let liveWrites = Promise.resolve();
      const servers = recordServerLoad(pool, { intervalMs: SCRAPE_MS }, (load) => (liveWrites = liveWrites.then(() => appendFile(live, `${JSON.stringify(load)}\n`)).catch(() => {})));
      const client = measureClient();
      const report = await watchRun(run, label, Boolean(flags.quiet), stop, jobWatch({ ...flags, hostfile: exp.hostfile }, job, swarm));
      const readings = servers.stop();
      const s = report.summary;
      const overhead = client.finish(s.prompts);
      if (!flags.quiet) process.stderr.write(`${clientOverheadLines(overhead).join('\n')}\n`);
      await writer.close(run.progress.total);
      allOk &&= s.prompts > 0 && s.ok === s.prompts;
      await writeFile(join(folder, 'runs', `${name}.json`), `${JSON.stringify({ experiment: basename(file), point, scenario, summary: s, client: overhead, servers: readings }, null, 2)}\n`);
      await liveWrites;
      await rm(live, { force: true });
      finished.push({ name, point, scenario, summary: s, stream: exp.stream || point.arm === 'load' });
      const key = `${point.value ?? ''}\u0000${point.arm}`;
      summaries.set(key, [...(summaries.get(key) ?? []), s]);
      // The job's servers are gone (its walltime, or an early end): no later point can run on them.
      const stoppedByJob = jobStopLine(report, `swarm run ${file} again on the next job's hostfile`);
      if (stoppedByJob) {
        process.stderr.write(`${stoppedByJob}\n`);
        allOk = false;
        break;
      }
    }
    await swarm.close();
    const rows = sweepRows([...summaries].map(([key, list]) => ({ value: Number(key.split('\u0000')[0] || 0), arm: key.split('\u0000')[1]!, summaries: list })));
    const parameter = exp.sweep?.parameter ?? 'run';
    const metric = exp.sweep?.metric ?? (exp.pattern === 'load' ? 'prompt_throughput' : 'wall_s');
    const { lines: planLines, ...plan } = await planOf(folder, finished, tagged.options.maxNumSeqs);
    await writeFile(join(folder, 'sweep.json'), `${JSON.stringify({ experiment: basename(file), parameter, metric, rows, plan }, null, 2)}\n`);
    await writeFile(join(folder, 'sweep.csv'), sweepCsv(parameter, rows));
    process.stdout.write(`${sweepTable(parameter, metric, rows, Boolean(exp.sweep))}\n${planLines.join('\n')}\nsaved: ${printable(folder)} (${basename(file)}, sweep.json, sweep.csv, runs/)\n`);
    process.exitCode = exitCode(stop, allOk && !stop.reason());
  });
}

/** Every run the file asks for: each value, each repetition, each arm, the arms' order reversed every other repetition (as compare's rounds), so neither arm always runs on servers the other just warmed. */
function pointsOf(exp: Experiment): Point[] {
  const values = exp.sweep?.values ?? [undefined];
  return values.flatMap((value) => Array.from({ length: exp.repetitions }, (_, repetition) => (repetition % 2 ? [...exp.arms].reverse() : exp.arms).map((arm) => ({ value, arm, repetition }))).flat());
}

/** The prompts of a scatter run (a load run draws from them); a file is read now so a bad one is bad input before any request. */
async function promptsOf(exp: Experiment): Promise<PromptInput[]> {
  const source = exp.prompts;
  if (source.kind === 'inline') return source.prompts;
  if (source.kind === 'synthetic') {
    const random = mulberry32(1);
    return Array.from({ length: source.count }, () => ({ prompt: syntheticPrompt(source.inputLen, random) }));
  }
  try {
    return (await loadPrompts(source.path)).toArray();
  } catch (err) {
    throw err instanceof PromptFileError ? new CliError(`${printable(exp.file)}: prompts.file: ${err.message}`) : err;
  }
}

/** One point's run on the swarm, the swept parameter applied; its pool, and what the planner would call it (null: an open-loop load run, whose wall is its duration). */
function start(exp: Experiment, point: Point, all: SwarmPool, prompts: readonly PromptInput[], base: RunOptions): { run: Run; pool: SwarmPool; scenario: Scenario | null } {
  const p = exp.sweep?.parameter;
  const v = point.value;
  let pool = p === 'endpoints' ? subpool.slice(all, 0, v) : all;
  const options: RunOptions = { ...base, ...(p === 'max_tokens' ? { maxTokens: v } : {}) };
  const concurrency = p === 'concurrency' ? v : exp.concurrency;
  if (point.arm === 'load') {
    const random = mulberry32(point.repetition);
    const rate = p === 'request_rate' ? v : exp.requestRate;
    if (concurrency) pool = pool.withConcurrency(concurrency);
    const run = sustainedLoad(pool, {
      ...options,
      durationMs: exp.duration! * 1000,
      ...(rate ? { nextGapMs: arrivalGaps(rate, exp.arrivals, random) } : { users: concurrency ?? 512 }),
      next: loadRequests({ prompts }, exp.outputLen, exp.rangeRatio, random),
      ...(exp.slo ? { slo: exp.slo } : {}),
    });
    return { run, pool, scenario: null };
  }
  // list_length: that many prompts per endpoint (one batch each), the prompts cycled to fill them.
  const perEndpoint = p === 'list_length' ? v : exp.listLength;
  const list = perEndpoint ? Array.from({ length: perEndpoint * pool.endpoints.length }, (_, i) => prompts[i % prompts.length]!) : prompts;
  // The individual arm fills the servers' slots unless the file sets its concurrency (a matched comparison).
  const cap = concurrency ?? (point.arm === 'individual' ? matchedConcurrency('match', list.length, pool.endpoints.length * pool.options.maxNumSeqs, pool.options.concurrency) : undefined);
  if (cap) pool = pool.withConcurrency(cap);
  const run = scatterGather(pool, list, { ...options, batch: point.arm === 'batched', stream: exp.stream, keepResults: false });
  return { run, pool, scenario: { endpoints: pool.endpoints.length, prompts: list.length, inFlight: pool.options.concurrency, batched: point.arm === 'batched' } };
}

/** Between readings of the servers' `/metrics` during a run (a sample of at most 128 of them is read, so 1,000 servers are read as often). */
const SCRAPE_MS = 1_000;

/** A finished run, as the planner sees it. */
interface Done {
  name: string;
  point: Point;
  scenario: Scenario | null;
  summary: RunSummary;
  stream: boolean;
}

/**
 * The capacity planner fitted on the experiment's first streamed run (its results file), each closed
 * run (scatter, batched or individual) predicted beside what it measured: the check that the model
 * holds at the other sizes the experiment ran. Lines saying why when it cannot (no streamed run).
 */
async function planOf(folder: string, done: readonly Done[], maxNumSeqs: number): Promise<{ fittedOn: string | null; model: object | null; rows: PredictedRun[]; lines: string[] }> {
  const first = done.find((d) => d.stream);
  if (!first) return { fittedOn: null, model: null, rows: [], lines: ['planner: no streamed run to fit (params.stream: true, or a load pattern)'] };
  const results = (await readFile(join(folder, 'runs', `${first.name}.jsonl`), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as PromptResult);
  let model;
  try {
    model = fitLatencyModel(results, maxNumSeqs);
  } catch (err) {
    if (err instanceof FitError) return { fittedOn: first.name, model: null, rows: [], lines: [`planner: ${err.message}`] };
    throw err;
  }
  const rows = done.flatMap((d): PredictedRun[] => (d.scenario ? [{ value: d.point.value ?? null, arm: d.point.arm, repetition: d.point.repetition + 1, predictedMs: predictWall(model, d.scenario).wallMs, measuredMs: d.summary.wallMs, fitted: d === first }] : []));
  const { lengths: _lengths, ...shown } = model;
  const lines = [`planner fitted on ${first.name} (step ${model.stepMs.toFixed(2)} ms + ${model.perSeqMs.toFixed(3)} ms per sequence, prefill ${model.prefillMsPerToken.toFixed(4)} ms per prompt token, overhead ${model.overheadMs.toFixed(1)} ms, max-num-seqs ${maxNumSeqs}):`];
  if (rows.length) {
    lines.push(
      columns([
        ['run', 'predicted', 'measured', 'error'],
        ...rows.map((r) => [`${r.value ?? ''} ${r.arm} #${r.repetition}${r.fitted ? ' (fitted)' : ''}`.trim(), secs(r.predictedMs), secs(r.measuredMs), `${(((r.predictedMs - r.measuredMs) / r.measuredMs) * 100).toFixed(1)} %`]),
      ]),
    );
  } else lines.push('  no closed run to predict (a load run\'s wall time is its duration)');
  return { fittedOn: first.name, model: shown, rows, lines };
}

const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

const fmt = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toPrecision(3));

/** The metric against the parameter: one line per value and arm, median and IQR over the repetitions. */
export function sweepTable(parameter: string, metric: string, rows: readonly SweepRow[], swept: boolean): string {
  const head = [swept ? parameter : '', 'arm', `${metric} median`, 'IQR (q1 – q3)', 'runs'];
  const body = rows.map((r) => {
    const s = r.metrics[metric as keyof SweepRow['metrics']];
    return [swept ? String(r.value) : '', r.arm, s ? fmt(s.median) : 'n/a', s ? `${fmt(s.q1)} – ${fmt(s.q3)}` : 'n/a', String(r.runs)];
  });
  return columns([head, ...body]);
}

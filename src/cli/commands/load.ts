import { writeFile } from 'node:fs/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  ARRIVAL_PROCESSES,
  arrivalGaps,
  loadPrompts,
  loadRequests,
  OrderedJsonlWriter,
  parseSlo,
  PromptFileError,
  sustainedLoad,
  type ArrivalProcess,
  type PromptInput,
  type Slo,
} from '../../core/index.ts';
import { mulberry32 } from '../../sim/random.ts';
import { CliError } from '../exit.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { addGenerationOptions, addSwarmOptions, int, narrowed, num, runOptions, type GenerationFlags, type SwarmFlags } from '../options.ts';
import { claimResults, checkOutPath, shownRow } from '../output.ts';
import { watchRun } from '../progress.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';

export interface LoadFlags extends SwarmFlags, GenerationFlags, ReachFlags {
  duration: number;
  requestRate?: number;
  arrivals: ArrivalProcess;
  prompts?: string;
  inputLen?: number;
  outputLen?: number;
  rangeRatio: number;
  slo?: Slo;
  loadSeed: number;
  out?: string;
  record?: string;
  quiet?: boolean;
}

function sloFlag(value: string): Slo {
  try {
    return parseSlo(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

export function loadCommand(): Command {
  const cmd = new Command('load')
    .usage('--hostfile FILE --duration SECONDS (--prompts FILE | --input-len N) [options]')
    .description('sustained load as `vllm bench serve` applies it: streamed requests for a duration, at a request rate or a concurrency; latencies, and goodput under --slo')
    .requiredOption('--duration <seconds>', 'send new requests for this long (the run ends once the last is answered)', num('--duration', 0.001, 7 * 86_400))
    .option('--request-rate <r>', 'requests per second arriving (open loop; --concurrency caps what is in flight, as --max-concurrency does); default: a closed loop of --concurrency clients', num('--request-rate', 0.001, 1_000_000))
    .addOption(new Option('--arrivals <process>', 'with --request-rate: Poisson arrivals (vLLM bench\'s default, burstiness 1) or constant gaps').choices([...ARRIVAL_PROCESSES]).default('poisson'))
    .option('--prompts <file>', 'prompts to draw from at random (.jsonl or text, as scatter reads them)')
    .option('--input-len <n>', 'instead of --prompts: random prompts of about n tokens', int('--input-len', 1, 1_000_000))
    .option('--output-len <n>', 'hold each answer to about n tokens (max_tokens with ignore_eos)', int('--output-len', 1, 1_000_000))
    .option('--range-ratio <r>', 'lengths drawn uniformly from n × (1 ± r), as --random-range-ratio', num('--range-ratio', 0, 0.999), 0)
    .option('--slo <objectives>', 'count goodput: requests meeting every objective per second, e.g. ttft=500,tpot=50,e2el=5000 (ms)', sloFlag)
    .option('--load-seed <s>', 'seed of arrivals, drawn prompts and lengths', int('--load-seed', 0, 4_294_967_295), 0)
    .option('--out <file>', 'every request\'s result as JSONL, in arrival order (with its timings: `swarm plan` reads it)')
    .option('--record <file>', 'the run record (settings, summary, goodput) as JSON; default with --out: <out>.run.json')
    .option('--quiet', 'no progress bar or summary on stderr');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: LoadFlags) => {
    if (Boolean(flags.prompts) === Boolean(flags.inputLen)) throw new CliError('give one of --prompts FILE and --input-len N');
    if (flags.route && flags.route !== 'round-robin') throw new CliError(`--route ${flags.route}: a load run sends each request on its own and places it round-robin; the load-aware routes need a whole run's view (use scatter --no-batch)`);
    const source = flags.inputLen ? { inputLen: flags.inputLen } : { prompts: await promptFile(flags.prompts!) };
    const record = flags.record ?? (flags.out ? `${flags.out}.run.json` : undefined);
    if (record) await checkOutPath(record, [['--prompts', flags.prompts], ['--hostfile', flags.hostfile]], '--record');
    const lock = flags.out ? await claimResults(flags.out, [['--prompts', flags.prompts], ['--hostfile', flags.hostfile]], { flag: '--out' }) : undefined;
    const stop = claimStop();
    // A load run measures the servers: a second copy of a slow request (a hedge) would add load the plan did not ask for.
    const swarm = await openUnlessStopped({ ...flags, hedge: false }, stop, { select: runOptions(flags) }, async () => lock?.release());
    if (!swarm) return;
    const random = mulberry32(flags.loadSeed);
    const run = sustainedLoad(narrowed(swarm.pool, flags), {
      ...runOptions(flags),
      durationMs: flags.duration * 1000,
      ...(flags.requestRate ? { nextGapMs: arrivalGaps(flags.requestRate, flags.arrivals, random) } : { users: flags.concurrency ?? 512 }),
      next: loadRequests(source, flags.outputLen, flags.rangeRatio, random),
      ...(flags.slo ? { slo: flags.slo } : {}),
    });
    const writer = flags.out ? new OrderedJsonlWriter({ path: flags.out, ...(lock ? { lock } : {}), show: shownRow, onFailure: () => run.cancel() }) : undefined;
    if (writer) run.on('result', (r) => writer.add(r));
    const how = flags.requestRate ? `${flags.requestRate} req/s ${flags.arrivals}` : `${flags.concurrency} in flight`;
    const report = await watchRun(run, `load (${how})`, Boolean(flags.quiet), stop, flags.hostfile ? { hostfile: flags.hostfile } : {});
    await swarm.close();
    if (writer) await writer.close(run.progress.total).catch((err: unknown) => {
      throw new CliError(`error: ${(err as Error).message}`, exitCode(stop, false));
    });
    if (record) {
      const settings = { duration: flags.duration, requestRate: flags.requestRate ?? null, arrivals: flags.requestRate ? flags.arrivals : null, concurrency: flags.concurrency, prompts: flags.prompts ?? null, inputLen: flags.inputLen ?? null, outputLen: flags.outputLen ?? null, rangeRatio: flags.rangeRatio, slo: flags.slo ?? null, loadSeed: flags.loadSeed };
      await writeFile(record, `${JSON.stringify({ kind: 'sustained-load', settings, results: flags.out ?? null, summary: report.summary }, null, 2)}\n`);
    }
    if (report.error && !report.cancelled) process.stderr.write(`error: ${printable(report.error)}\n`);
    const s = report.summary;
    process.exitCode = exitCode(stop, s.prompts > 0 && s.ok === s.prompts);
  });
}

/** The prompts a load run draws from; a bad file is bad input (exit 2) before anything is sent. */
async function promptFile(path: string): Promise<PromptInput[]> {
  try {
    return (await loadPrompts(path)).toArray();
  } catch (err) {
    throw err instanceof PromptFileError ? new CliError(err.message) : err;
  }
}

import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError } from 'commander';
import { batchesVaried, endpointsForDeadline, FitError, fitLatencyModel, predictWall, type LatencyModel, type PromptResult, type Scenario } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { columns, printable } from '../format.ts';
import { int, num } from '../options.ts';

interface PlanFlags {
  maxNumSeqs: number;
  endpoints?: number[];
  prompts?: number[];
  concurrency?: number;
  batched?: boolean;
  deadline?: number;
  json?: boolean;
}

/** `1,4,16`: whole numbers from 1 to max. */
function counts(name: string, max: number) {
  const one = int(name, 1, max);
  return (value: string): number[] => {
    const list = value.split(',').map((v) => one(v));
    if (list.length > 100) throw new InvalidArgumentError(`${name}: at most 100 values`);
    return list;
  };
}

export function planCommand(): Command {
  return new Command('plan')
    .usage('RESULTS.jsonl --max-num-seqs S [--endpoints 1,4,16] [--prompts N,…] [--concurrency C | --batched] [--deadline SECONDS]')
    .description("a capacity planner: fits a latency model (request overhead, prefill per prompt token, decode step against the batch, the servers' max-num-seqs) to a streamed run's results (swarm load --out, or scatter --stream --out) and predicts the wall time of other endpoint counts, prompt counts and in-flight; with --deadline, how many endpoints finish the prompts in time")
    .argument('<results>', 'a streamed run\'s results JSONL (each row\'s endpoint, timings and token counts)')
    .requiredOption('--max-num-seqs <k>', "the servers' --max-num-seqs (sequences each runs at once; clients cannot see it)", int('--max-num-seqs', 1, 65_536))
    .option('--endpoints <list>', 'endpoint counts to predict (default: the run\'s)', counts('--endpoints', 1_000_000))
    .option('--prompts <list>', 'prompt counts to predict (default: the run\'s)', counts('--prompts', 1_000_000_000))
    .option('--concurrency <n>', 'individual requests in flight across the swarm (default: as many per endpoint as the run had)', int('--concurrency', 1, 10_000_000))
    .option('--batched', 'predict batch prompting: each endpoint gets its prompts in one list')
    .option('--deadline <seconds>', 'also: the fewest endpoints that finish each prompt count within this', num('--deadline', 0.001, 365 * 86_400))
    .option('--json', 'the model and the predictions as JSON on stdout')
    .action(async (path: string, flags: PlanFlags) => {
      if (flags.batched && flags.concurrency) throw new CliError('--concurrency applies to individual requests; drop it or --batched');
      const model = fit(await readResults(path), flags.maxNumSeqs, path);
      const fitted = model.fittedOn;
      const perEndpoint = fitted.inFlight / fitted.endpoints;
      const scenario = (endpoints: number, prompts: number): Scenario => ({ endpoints, prompts, inFlight: flags.concurrency ?? Math.max(1, Math.round(perEndpoint * endpoints)), batched: Boolean(flags.batched) });
      const self = predictWall(model, { endpoints: fitted.endpoints, prompts: fitted.requests, inFlight: fitted.inFlight });
      const rows = (flags.endpoints ?? [fitted.endpoints]).flatMap((e) => (flags.prompts ?? [fitted.requests]).map((n) => ({ ...scenario(e, n), ...predictWall(model, scenario(e, n)) })));
      const deadlines = flags.deadline === undefined ? [] : (flags.prompts ?? [fitted.requests]).map((n) => ({ prompts: n, deadlineMs: flags.deadline! * 1000, endpoints: endpointsForDeadline(model, n, flags.deadline! * 1000, flags.batched ? model.maxNumSeqs : Math.max(1, Math.round(perEndpoint)), Boolean(flags.batched)) }));
      const { lengths: _lengths, ...shown } = model;
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ model: shown, fittedRun: { predictedMs: self.wallMs, measuredMs: fitted.wallMs }, predictions: rows, deadlines }, null, 2)}\n`);
        return;
      }
      process.stdout.write(`${modelLines(model, self.wallMs).join('\n')}\n\n${table(rows)}\n`);
      for (const d of deadlines) {
        const n = d.prompts.toLocaleString('en-US');
        process.stdout.write(d.endpoints === null ? `${n} prompts within ${flags.deadline} s: not even with 100,000 endpoints\n` : `${n} prompts within ${flags.deadline} s: ${d.endpoints.toLocaleString('en-US')} endpoint(s) (predicted ${secs(predictWall(model, scenario(d.endpoints, d.prompts)).wallMs)})\n`);
      }
    });
}

async function readResults(path: string): Promise<PromptResult[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(`${printable(path)}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return text.split('\n').flatMap((line, i) => {
    if (!line.trim()) return [];
    try {
      const row = JSON.parse(line) as PromptResult;
      if (typeof row !== 'object' || row === null || typeof row.timings !== 'object') throw new Error('not a result row (no timings)');
      return [row];
    } catch (err) {
      throw new CliError(`${printable(path)}:${i + 1}: ${(err as Error).message.split('\n')[0]}`);
    }
  });
}

function fit(results: PromptResult[], maxNumSeqs: number, path: string): LatencyModel {
  try {
    return fitLatencyModel(results, maxNumSeqs);
  } catch (err) {
    throw err instanceof FitError ? new CliError(`${printable(path)}: ${err.message}`) : err;
  }
}

const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
const ms = (v: number) => `${v < 1 ? v.toFixed(3) : v < 100 ? v.toFixed(2) : Math.round(v).toLocaleString('en-US')} ms`;

function modelLines(m: LatencyModel, selfMs: number): string[] {
  const f = m.fittedOn;
  const [lo, hi] = f.batchRange;
  const lines = [
    `fitted on ${f.requests.toLocaleString('en-US')} streamed requests over ${f.endpoints} endpoint(s), ${f.inFlight.toLocaleString('en-US')} in flight at the peak, batches of ${lo.toFixed(1)}–${hi.toFixed(1)} sequences (10th–90th percentile)`,
    `  engine step    ${ms(m.stepMs)} + ${ms(m.perSeqMs)} per running sequence (max-num-seqs ${m.maxNumSeqs})`,
    `  prefill        ${ms(m.prefillMsPerToken)} per prompt token`,
    `  overhead       ${ms(m.overheadMs)} per request (front end and wire, from first-token times)`,
    `  the fitted run: predicted ${secs(selfMs)}, measured ${secs(f.wallMs)} (its first wave's cold start is not in the model)`,
  ];
  if (!batchesVaried(f.batchRange)) lines.push(`warning: the run's batches stayed within ${lo.toFixed(1)}–${hi.toFixed(1)} sequences, so the step's split into fixed and per-sequence cost is not seen: the step is taken as fixed, and predictions at other batch sizes extrapolate (fit a run whose load varies: swarm load --request-rate)`);
  return lines;
}

function table(rows: ReadonlyArray<Scenario & { wallMs: number; perEndpoint: number; running: number }>): string {
  const head = ['endpoints', 'prompts', 'mode', 'in flight', 'per endpoint', 'running', 'predicted wall'];
  const body = rows.map((r) => [r.endpoints, r.prompts, r.batched ? 'batched' : 'individual', r.batched ? '—' : r.inFlight, r.perEndpoint, r.running, secs(r.wallMs)].map((c) => (typeof c === 'number' ? c.toLocaleString('en-US') : c)));
  return columns([head, ...body]);
}

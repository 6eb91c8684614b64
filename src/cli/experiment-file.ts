import { dirname, resolve } from 'node:path';
import { ARRIVAL_PROCESSES, LIMITS, parseSlo, rangeText, SWEEP_METRICS, withinLimit, type ArrivalProcess, type GenerationParams, type NumericParam, type PromptInput, type Slo, type SweepMetric } from '../core/index.ts';
import { CliError } from './exit.ts';
import { printable } from './format.ts';
import { readConfigFile } from './config-file.ts';

/** What a sweep may vary, one parameter per experiment. */
export const SWEEP_PARAMETERS = ['concurrency', 'list_length', 'endpoints', 'max_tokens', 'request_rate'] as const;
export type SweepParameter = (typeof SWEEP_PARAMETERS)[number];

export type PromptSource = { kind: 'inline'; prompts: PromptInput[] } | { kind: 'file'; path: string } | { kind: 'synthetic'; count: number; inputLen: number };

/** An experiment file (`*.swarm.yaml`) once checked: every path resolved against the file's folder. */
export interface Experiment {
  file: string;
  name: string;
  hostfile: string;
  tags: Array<[string, string]>;
  /** The servers' --max-num-seqs (a client cannot see it): the individual arm's matched in flight and the planner's fit. */
  maxNumSeqs?: number;
  model?: string;
  prompts: PromptSource;
  pattern: 'scatter' | 'load';
  /** Scatter: one arm per mode compared (`compare`), else the one of `params.batch`; load: `load`. */
  arms: Array<'batched' | 'individual' | 'load'>;
  stream: boolean;
  concurrency?: number;
  /** Scatter: prompts per endpoint (the batch's list length); unset: every prompt once. */
  listLength?: number;
  duration?: number;
  requestRate?: number;
  arrivals: ArrivalProcess;
  outputLen?: number;
  rangeRatio: number;
  slo?: Slo;
  sampling: Pick<GenerationParams, SampledParam>;
  repetitions: number;
  sweep?: { parameter: SweepParameter; values: number[]; metric: SweepMetric };
}

const TOP = ['name', 'endpoints', 'model', 'prompts', 'pattern', 'params', 'sampling', 'repetitions', 'compare', 'sweep'];
const PARAMS = ['batch', 'stream', 'concurrency', 'list_length', 'duration', 'request_rate', 'arrivals', 'output_len', 'range_ratio', 'slo'];
/** The generation parameters an experiment may fix, under vLLM's names and within the core's (vLLM's) limits. */
const SAMPLED = ['maxTokens', 'temperature', 'topP', 'seed'] as const satisfies readonly NumericParam[];
type SampledParam = (typeof SAMPLED)[number];
const LISTED = 20;

/**
 * Reads and checks an experiment file; every problem is named by file and key, all at once, and a
 * bad file is bad input (exit 2) before anything is sent.
 */
export async function readExperiment(path: string): Promise<Experiment> {
  const raw = await readConfigFile(path);
  const shown = printable(path);
  const problems: string[] = [];
  const bad = (key: string, why: string) => problems.push(`${shown}: ${key}: ${why}`);
  const folder = dirname(resolve(path));
  const obj = (v: unknown, key: string): Record<string, unknown> => {
    if (v === undefined) return {};
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return (bad(key, 'must be a mapping'), {});
    return v as Record<string, unknown>;
  };
  const known = (o: Record<string, unknown>, keys: string[], where: string) => {
    for (const k of Object.keys(o)) if (!keys.includes(k)) bad(where ? `${where}.${k}` : k, `unknown key (expected one of ${keys.join(', ')})`);
  };
  const number = (o: Record<string, unknown>, key: string, where: string, min: number, max: number, integer: boolean): number | undefined => {
    const v = o[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v))) return (bad(`${where}${key}`, `must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`), undefined);
    return v;
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new CliError(`${shown}: expected a mapping of experiment keys (${TOP.join(', ')})`);
  const top = raw as Record<string, unknown>;
  known(top, TOP, '');

  const endpoints = obj(top.endpoints, 'endpoints');
  known(endpoints, ['hostfile', 'tag', 'max_num_seqs'], 'endpoints');
  if (typeof endpoints.hostfile !== 'string' || !endpoints.hostfile) bad('endpoints.hostfile', 'required: the hostfile (relative to this file)');
  const tags = Object.entries(obj(endpoints.tag, 'endpoints.tag')).map(([k, v]): [string, string] => {
    if (typeof v !== 'string' && typeof v !== 'number') bad(`endpoints.tag.${k}`, 'must be a string');
    return [k, String(v)];
  });
  if (top.model !== undefined && typeof top.model !== 'string') bad('model', 'must be a string');

  const pattern = top.pattern ?? 'scatter';
  if (pattern !== 'scatter' && pattern !== 'load') bad('pattern', 'must be scatter or load');

  const params = obj(top.params, 'params');
  known(params, PARAMS, 'params');
  for (const k of ['batch', 'stream']) if (params[k] !== undefined && typeof params[k] !== 'boolean') bad(`params.${k}`, 'must be true or false');
  const arrivals = (params.arrivals ?? 'poisson') as ArrivalProcess;
  if (!ARRIVAL_PROCESSES.includes(arrivals)) bad('params.arrivals', `must be one of ${ARRIVAL_PROCESSES.join(', ')}`);
  let slo: Slo | undefined;
  if (params.slo !== undefined) {
    try {
      slo = parseSlo(String(params.slo));
    } catch (err) {
      bad('params.slo', (err as Error).message);
    }
  }
  const duration = number(params, 'duration', 'params.', 0.001, 7 * 86_400, false);
  if (pattern === 'load' && duration === undefined) bad('params.duration', 'required with pattern load (seconds)');

  const sampling = obj(top.sampling, 'sampling');
  known(sampling, SAMPLED.map((name) => LIMITS[name].wire), 'sampling');

  const compare = top.compare;
  let arms: Experiment['arms'] = pattern === 'load' ? ['load'] : [params.batch === false ? 'individual' : 'batched'];
  if (compare !== undefined) {
    if (pattern !== 'scatter') bad('compare', 'applies to pattern scatter (batched and individual arms)');
    else if (!Array.isArray(compare) || !compare.length || compare.some((a) => a !== 'batched' && a !== 'individual') || new Set(compare).size !== compare.length) bad('compare', 'must list the arms to compare: batched, individual');
    else arms = compare as Experiment['arms'];
  }

  const prompts = promptSource(top.prompts, folder, bad);

  let sweep: Experiment['sweep'];
  if (top.sweep !== undefined) {
    const s = obj(top.sweep, 'sweep');
    known(s, ['parameter', 'values', 'metric'], 'sweep');
    const parameter = s.parameter as SweepParameter;
    if (!SWEEP_PARAMETERS.includes(parameter)) bad('sweep.parameter', `must be one of ${SWEEP_PARAMETERS.join(', ')}`);
    if (parameter === 'request_rate' && pattern !== 'load') bad('sweep.parameter', 'request_rate needs pattern load');
    if (parameter === 'list_length' && pattern !== 'scatter') bad('sweep.parameter', 'list_length needs pattern scatter');
    const values = s.values;
    const whole = parameter !== 'request_rate';
    if (!Array.isArray(values) || !values.length || values.some((v) => typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || (whole && !Number.isInteger(v)))) bad('sweep.values', `must be a non-empty list of positive ${whole ? 'whole numbers' : 'numbers'}`);
    const metric = (s.metric ?? (pattern === 'load' ? (slo ? 'goodput' : 'prompt_throughput') : 'wall_s')) as SweepMetric;
    if (!(metric in SWEEP_METRICS)) bad('sweep.metric', `must be one of ${Object.keys(SWEEP_METRICS).join(', ')}`);
    if (metric === 'goodput' && !slo) bad('sweep.metric', 'goodput needs params.slo');
    sweep = { parameter, values: Array.isArray(values) ? (values as number[]) : [], metric };
  }

  const experiment: Experiment = {
    file: path,
    name: typeof top.name === 'string' ? top.name : path,
    hostfile: resolve(folder, String(endpoints.hostfile ?? '')),
    tags,
    ...(typeof top.model === 'string' ? { model: top.model } : {}),
    prompts,
    pattern: pattern as Experiment['pattern'],
    arms,
    stream: pattern === 'load' || params.stream === true,
    arrivals,
    rangeRatio: number(params, 'range_ratio', 'params.', 0, 0.999, false) ?? 0,
    sampling: {},
    repetitions: number(top, 'repetitions', '', 1, 1000, true) ?? 1,
    ...(slo ? { slo } : {}),
    ...(sweep ? { sweep } : {}),
  };
  const set = <K extends keyof Experiment>(key: K, value: Experiment[K] | undefined) => {
    if (value !== undefined) experiment[key] = value;
  };
  set('maxNumSeqs', number(endpoints, 'max_num_seqs', 'endpoints.', 1, 65_536, true));
  set('concurrency', number(params, 'concurrency', 'params.', 1, 100_000, true));
  set('listLength', number(params, 'list_length', 'params.', 1, 10_000_000, true));
  set('duration', duration);
  set('requestRate', number(params, 'request_rate', 'params.', 0.001, 1_000_000, false));
  set('outputLen', number(params, 'output_len', 'params.', 1, 1_000_000, true));
  for (const name of SAMPLED) {
    const { wire } = LIMITS[name];
    if (sampling[wire] === undefined) continue;
    if (withinLimit(LIMITS[name], sampling[wire])) experiment.sampling[name] = sampling[wire];
    else bad(`sampling.${wire}`, `must be ${rangeText(LIMITS[name])}`);
  }
  if (problems.length) {
    const more = problems.length > LISTED ? [`… and ${problems.length - LISTED} more`] : [];
    throw new CliError([...problems.slice(0, LISTED), ...more].map(printable).join('\n'));
  }
  return experiment;
}

/** `prompts:` a list of strings, `{file: PATH}`, or `{count: N, input_len: L}` (random prompts of about L tokens). */
function promptSource(v: unknown, folder: string, bad: (key: string, why: string) => void): PromptSource {
  if (Array.isArray(v)) {
    if (!v.length || v.some((p) => typeof p !== 'string' || !p)) bad('prompts', 'an inline list must hold non-empty strings');
    return { kind: 'inline', prompts: v.map((p) => ({ prompt: String(p) })) };
  }
  const o = v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  if (o && typeof o.file === 'string' && Object.keys(o).length === 1) return { kind: 'file', path: resolve(folder, o.file) };
  if (o && Object.keys(o).every((k) => k === 'count' || k === 'input_len')) {
    const ok = (n: unknown) => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 10_000_000;
    if (!ok(o.count)) bad('prompts.count', 'must be a whole number from 1 to 10,000,000');
    if (!ok(o.input_len)) bad('prompts.input_len', 'must be a whole number of tokens from 1 to 10,000,000');
    return { kind: 'synthetic', count: Number(o.count), inputLen: Number(o.input_len) };
  }
  bad('prompts', 'required: a list of strings, {file: PATH} or {count: N, input_len: TOKENS}');
  return { kind: 'inline', prompts: [] };
}

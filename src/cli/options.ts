import { InvalidArgumentError, Option, type Command } from 'commander';
import { generationParams, LIMITS, numberText, parseTagFilter, rangeText, ROUTE_STRATEGIES, subpool, withinLimit, type NumericParam, type RouteStrategy, type RunOptions, type SwarmPool } from '../core/index.ts';

/** Options of every command that reads a hostfile and talks to the swarm. */
export interface SwarmFlags {
  hostfile?: string;
  model?: string;
  tag: Array<[string, string]>;
  concurrency?: number;
  timeout?: number;
  timeoutPerSequence?: number;
  batchTimeoutCap?: number;
  maxNumSeqs?: number;
  attempts?: number;
  stallTimeout?: number;
  hedge?: boolean;
  hedgeAfter?: number;
  route?: RouteStrategy;
  sample?: number;
  slice?: [number, number | undefined];
}

export interface GenerationFlags {
  maxTokens?: number;
  system?: string;
  temperature?: number;
  topP?: number;
  seed?: number;
  stop: string[];
  n?: number;
  param: Record<string, unknown>;
  reasoningFallback?: boolean;
  tokenIds: boolean;
}

/** `--template`: `auto`, `server`, `none`, or `file:PATH` (loaded by the command, so a bad file is one clear line). */
export type TemplateFlag = 'auto' | 'server' | 'none' | { file: string };

export function templateFlag(value: string): TemplateFlag {
  if (value === 'auto' || value === 'server' || value === 'none') return value;
  if (value.startsWith('file:') && value.length > 5) return { file: value.slice(5) };
  throw new InvalidArgumentError('must be server, none, auto or file:PATH (a tokenizer_config.json or a .jinja chat template)');
}

const show = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 3 });

/** An integer option within bounds a person would choose (never "up to 9007199254740991"). */
export function int(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer from ${show(min)} to ${show(max)}`);
    return n;
  };
}

export function num(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = value.trim() === '' ? NaN : Number(value);
    if (!Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a number from ${show(min)} to ${show(max)}`);
    return n;
  };
}

function collectTag(value: string, previous: Array<[string, string]>): Array<[string, string]> {
  try {
    return [...previous, parseTagFilter(value)];
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/** `--param key=value`: the value is JSON when it parses (numbers, booleans, objects), else a string. */
function collectParam(value: string, previous: Record<string, unknown>): Record<string, unknown> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError(`"${value}" must look like key=value`);
  const raw = value.slice(eq + 1);
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // a plain string
  }
  return { ...previous, [value.slice(0, eq)]: parsed };
}

/** `--slice a:b`, Python's slice of the endpoint list. */
function parseSlice(value: string): [number, number | undefined] {
  const m = /^\s*(-?\d*)\s*:\s*(-?\d*)\s*$/.exec(value);
  if (!m || (m[1]!.length > 7 || m[2]!.length > 7)) throw new InvalidArgumentError('--slice must look like a:b, a: or :b (whole numbers; negatives count from the end)');
  return [m[1] ? Number(m[1]) : 0, m[2] ? Number(m[2]) : undefined];
}

export function addSwarmOptions(cmd: Command): Command {
  return cmd
    .option('--hostfile <file>', 'hostfile: host<TAB>port<TAB>key=value… per line')
    .option('--model <name>', 'model to use (default: the first one the endpoints serve)')
    .addOption(new Option('--tag <key=value>', 'only endpoints with this tag (repeatable)').argParser(collectTag).default([], 'all endpoints'))
    .option('--slice <a:b>', 'only endpoints a … b-1 of those (Python slice: a:, :b, negatives count from the end)', parseSlice)
    .option('--sample <n>', 'only n of those endpoints, drawn at random', int('--sample', 1, 100_000))
    .option('--concurrency <n>', 'requests in flight across the swarm (a batch counts once)', int('--concurrency', 1, 100_000), 512)
    .option('--timeout <seconds>', 'deadline of one request, and the floor of a batch\'s', num('--timeout', 0.001, 86_400), 300)
    .option('--timeout-per-sequence <seconds>', 'a batch of n prompts gets max(timeout, ceil(n / max-num-seqs) × this)', num('--timeout-per-sequence', 0.001, 86_400), 60)
    .option('--batch-timeout-cap <seconds>', 'upper bound of a batch\'s scaled deadline', num('--batch-timeout-cap', 0.001, 604_800))
    .option('--max-num-seqs <k>', "the servers' --max-num-seqs, for scaling batch deadlines", int('--max-num-seqs', 1, 65_536), 256)
    .option('--attempts <n>', 'attempts per request on the same endpoint on resets, 429 and 502/503/504 (then it fails over)', int('--attempts', 1, 20), 4)
    .option('--stall-timeout <seconds>', 'a streamed answer with no token for this long (or 20× the run\'s p99 inter-token gap) goes to another endpoint', num('--stall-timeout', 0.01, 86_400), 10)
    .option('--hedge-after <factor>', 'once the other endpoints are idle, also send a request that has taken this many times the run\'s median elsewhere; the first answer wins', num('--hedge-after', 1, 1000), 2)
    .option('--no-hedge', 'never send a slow request\'s prompts to a second endpoint')
    .addOption(
      new Option('--route <strategy>', "where prompts go: round-robin (Aurora-Swarm's i mod n), least-requests (fewest in flight), least-load (running + waiting from /metrics), kv-cache (KV-cache use from /metrics), prefix-aware (a stable hash of the prompt's prefix, giving way when overloaded)")
        .choices([...ROUTE_STRATEGIES])
        .default('round-robin'),
    );
}

/** A generation parameter's flag: its parser and help take the core's one limit (vLLM's). */
function param(flag: string, name: NumericParam) {
  const limit = LIMITS[name];
  return (value: string): number => {
    const n = limit.integer && !/^\s*[+-]?\d+\s*$/.test(value) ? NaN : numberText(value);
    if (!withinLimit(limit, n)) throw new InvalidArgumentError(`${flag} must be ${rangeText(limit)}`);
    return n;
  };
}

const within = (name: NumericParam) => `(${rangeText(LIMITS[name])})`;

export function addGenerationOptions(cmd: Command): Command {
  return cmd
    .option('--max-tokens <n>', `max_tokens per answer ${within('maxTokens')}; default: sized from max_model_len, at most 512`, param('--max-tokens', 'maxTokens'))
    .option('--system <text>', 'system prompt (batch mode prepends it to each prompt)')
    .option('--temperature <t>', `sampling temperature ${within('temperature')}`, param('--temperature', 'temperature'))
    .option('--top-p <p>', `nucleus sampling ${within('topP')}`, param('--top-p', 'topP'))
    .option('--seed <s>', `sampling seed ${within('seed')}`, param('--seed', 'seed'))
    .addOption(new Option('--stop <text>', 'stop string, not empty (repeatable)').argParser((v: string, prev: string[]) => [...prev, v]).default([], 'none'))
    .option('-n, --n <n>', `choices per prompt ${within('n')}; results keep all in \`texts\``, param('-n', 'n'))
    .addOption(new Option('--param <key=value>', 'any other vLLM request field, e.g. reasoning_effort=low (repeatable)').argParser(collectParam).default({}, 'none'))
    .option('--reasoning-fallback', "use a reasoning model's chain of thought as the answer when it ran out of tokens (Aurora-Swarm's behaviour)")
    .option('--no-token-ids', "unstreamed batches: do not ask for each answer's token ids (return_token_ids, ~2.5× the response); rows' token counts are then null, the summary's totals stay");
}

/** Aurora-Swarm's sub-pool of the flags: the tagged endpoints (`--tag`), then `--slice` of them, then `--sample` of those. */
export function narrowed(pool: SwarmPool, flags: Pick<SwarmFlags, 'tag' | 'slice' | 'sample'>): SwarmPool {
  const tagged = flags.tag.reduce((p, [k, v]) => subpool.byTag(p, k, v), pool);
  const sliced = flags.slice ? subpool.slice(tagged, ...flags.slice) : tagged;
  return flags.sample ? subpool.sample(sliced, flags.sample) : sliced;
}

export function runOptions(flags: SwarmFlags & GenerationFlags): RunOptions {
  const { model, maxTokens, system, temperature, topP, seed, stop, n, param: extra } = flags;
  const o: RunOptions = { tags: flags.tag, ...generationParams({ model, maxTokens, system, temperature, topP, seed, stop, n, extra }) };
  if (flags.reasoningFallback) o.reasoningFallback = true;
  if (flags.tokenIds === false) o.tokenIds = false;
  return o;
}

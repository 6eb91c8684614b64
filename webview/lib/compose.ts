/**
 * What the Compose view edits, and the `RunRequest` it makes. Pure: no DOM, so node tests it.
 */
import { DEFAULT_REDUCE_PROMPT, type EndpointInfo, type Pattern, type PromptRow, type RunRequest } from '../../src/panel/protocol.ts';
import { defaultPatterns, PORTED_PATTERNS, portedRequest, portedSummary, type PatternsCompose } from './patterns-compose.ts';
import { naturalOrder } from '../../src/core/endpoints/natural-order.ts';
import { combinationProblem, COMPARE_ROUNDS, limitProblem, numberText, type NumericParam } from '../../src/core/requests/generation-params.ts';

export interface ComposeState {
  pattern: Pattern;
  /** scatter: the prompt set. */
  prompts: PromptRow[];
  /** map, and tree-reduce with items: `{item}` takes each item. */
  template: string;
  /** One item per line. */
  itemsText: string;
  /** broadcast, and tree-reduce without items. */
  prompt: string;
  reducePrompt: string;
  fanin: number;
  /** `key=value` tags every chosen endpoint must carry; empty: all endpoints. */
  tags: string[];
  model: string;
  maxTokens: string;
  temperature: string;
  system: string;
  topP: string;
  seed: string;
  /** One stop sequence per line. */
  stopText: string;
  n: string;
  /** A JSON object of other request fields. */
  extraText: string;
  batch: boolean;
  /**
   * Stream answers (TTFT, TPOT, ITL measured). On by default: a streamed batch releases each prompt
   * at its finish_reason, so progress moves per prompt and a cancel keeps every finished answer.
   */
  stream: boolean;
  compare: boolean;
  rounds: number;
  cacheSalt: boolean;
  /** The ported patterns' fields and the routing choice (patterns-compose.ts). */
  patterns: PatternsCompose;
}

export function defaultCompose(): ComposeState {
  return {
    pattern: 'scatter',
    prompts: [],
    template: 'Summarize in one sentence: {item}',
    itemsText: '',
    prompt: '',
    reducePrompt: DEFAULT_REDUCE_PROMPT,
    fanin: 8,
    tags: [],
    model: '',
    maxTokens: '',
    temperature: '',
    system: '',
    topP: '',
    seed: '',
    stopText: '',
    n: '',
    extraText: '',
    batch: true,
    stream: true,
    compare: false,
    rounds: 3,
    cacheSalt: true,
    patterns: defaultPatterns(),
  };
}

export const PATTERNS: Array<{ id: Pattern; label: string; help: string }> = [
  { id: 'scatter', label: 'Scatter-gather', help: 'Each prompt of the set goes to one endpoint; answers come back in input order.' },
  { id: 'map', label: 'Map-gather', help: 'A template with {item}, filled once per item.' },
  { id: 'broadcast', label: 'Broadcast', help: 'The same prompt to every chosen endpoint.' },
  { id: 'tree-reduce', label: 'Tree-reduce', help: 'Leaves (per item, or the prompt on every endpoint), then rounds that merge fan-in answers until one is left.' },
  ...PORTED_PATTERNS,
];

export function items(c: Pick<ComposeState, 'itemsText'>): string[] {
  return c.itemsText.split(/\r?\n/).filter((l) => l.trim() !== '');
}

export function tagPairs(tags: readonly string[]): Array<[string, string]> {
  return tags.map((t) => {
    const i = t.indexOf('=');
    return [t.slice(0, i), t.slice(i + 1)] as [string, string];
  });
}

/** Every `key=value` tag the endpoints carry, sorted. */
export function endpointTags(endpoints: readonly EndpointInfo[]): string[] {
  const all = new Set<string>();
  for (const e of endpoints) for (const [k, v] of Object.entries(e.tags)) all.add(`${k}=${v}`);
  return [...all].sort(naturalOrder);
}

/** Endpoints carrying all of the tags (the core's rule). */
export function matchingEndpoints(endpoints: readonly EndpointInfo[], tags: readonly string[]): EndpointInfo[] {
  const pairs = tagPairs(tags);
  return endpoints.filter((e) => pairs.every(([k, v]) => e.tags[k] === v));
}

/** Characters / 4: the usual rough token estimate. */
export const estimateTokens = (chars: number) => Math.ceil(chars / 4);

export interface ComposeSummary {
  /** Prompts the first wave sends (tree-reduce: the leaves). */
  count: number;
  chars: number;
  tokens: number;
  /** Why Run is not possible, or null. */
  problem: string | null;
  warnings: string[];
}

function templateChars(template: string, list: readonly string[]): number {
  const holes = template.split('{item}').length - 1;
  const base = template.length - holes * '{item}'.length;
  return list.reduce((sum, item) => sum + base + holes * item.length, 0);
}

/** Endpoint statuses that take no part in a run. */
export const NOT_ANSWERING = new Set(['excluded', 'down', 'tunnel-down']);

export function summarize(c: ComposeState, endpoints: readonly EndpointInfo[]): ComposeSummary {
  // Endpoints excluded from runs (Endpoints view), down or behind a broken tunnel answer nothing: broadcast and leaves skip them.
  const chosen = matchingEndpoints(endpoints, c.tags).filter((e) => !NOT_ANSWERING.has(e.status)).length;
  const warnings: string[] = [];
  let count = 0;
  let chars = 0;
  let problem: string | null = null;
  const list = items(c);
  switch (c.pattern) {
    case 'scatter':
      count = c.prompts.length;
      chars = c.prompts.reduce((s, p) => s + p.prompt.length, 0);
      if (!count) problem = 'Add or import prompts first.';
      else if (c.prompts.some((p) => !p.prompt.trim())) warnings.push('Some prompts are empty.');
      break;
    case 'map':
      count = list.length;
      chars = templateChars(c.template, list);
      if (!c.template.includes('{item}')) warnings.push('The template has no {item}: every prompt will be the same.');
      if (!count) problem = 'List the items, one per line.';
      break;
    case 'broadcast':
      count = chosen;
      chars = c.prompt.length * chosen;
      if (!c.prompt.trim()) problem = 'Write the prompt every endpoint answers.';
      break;
    case 'tree-reduce':
      if (list.length) {
        count = list.length;
        chars = templateChars(c.template, list);
        if (!c.template.includes('{item}')) warnings.push('The leaf template has no {item}.');
      } else {
        count = chosen;
        chars = c.prompt.length * chosen;
        if (!c.prompt.trim()) problem = 'Write the leaf prompt, or list items for the template.';
      }
      if (!c.reducePrompt.includes('{responses}')) problem = 'The reduce prompt must contain {responses}, where the answers to merge go.';
      else if (!Number.isInteger(c.fanin) || c.fanin < 2) problem = 'Fan-in must be a whole number of at least 2.';
      break;
  }
  const ported = portedSummary(c.pattern, c.patterns, c.prompt, chosen);
  if (ported) {
    ({ count, chars } = ported);
    problem ??= ported.problem;
  }
  // Down endpoints are a warning before Run (lib/swarm-health.ts), not a reason to refuse it.
  if (!problem && endpoints.length && !matchingEndpoints(endpoints, c.tags).some((e) => e.status !== 'excluded')) problem = 'No endpoint carries all the chosen tags.';
  for (const [name, label] of NUMBER_FIELDS) {
    const text = c[name].trim();
    if (text) problem ??= sentence(limitProblem(name, numberText(text), label));
  }
  if (c.compare && !(Number.isInteger(c.rounds) && c.rounds >= COMPARE_ROUNDS.min && c.rounds <= COMPARE_ROUNDS.max)) problem ??= `Rounds must be from ${COMPARE_ROUNDS.min} to ${COMPARE_ROUNDS.max}.`;
  problem ??= sentence(combinationProblem({ temperature: numberOrUnset(c.temperature), n: numberOrUnset(c.n) }));
  if (c.extraText.trim() && extraFields(c.extraText) === null) problem ??= 'Extra fields must be a JSON object, e.g. {"reasoning_effort": "low"}.';
  return { count, chars, tokens: estimateTokens(chars), problem, warnings };
}

/** The form's number fields, each checked against the core's limit (vLLM's) under the label the form shows. */
const NUMBER_FIELDS: ReadonlyArray<[NumericParam, string]> = [['maxTokens', 'Max tokens'], ['temperature', 'Temperature'], ['topP', 'top_p'], ['seed', 'Seed'], ['n', 'n']];

const numberOrUnset = (text: string) => (text.trim() ? numberText(text) : undefined);
const sentence = (problem: string | null) => (problem ? `${problem}.` : null);

/** The extra fields box as an object; null when it is not a JSON object. */
export function extraFields(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Batching, streaming and the comparison exist for scatter and map only: the others run on the chat path, unstreamed. */
export const canBatch = (pattern: Pattern) => pattern === 'scatter' || pattern === 'map';

export function buildRunRequest(c: ComposeState): RunRequest {
  const list = items(c);
  const request: RunRequest = { pattern: c.pattern, prompts: [], tags: tagPairs(c.tags), batch: canBatch(c.pattern) && c.batch };
  switch (c.pattern) {
    case 'scatter':
      request.prompts = c.prompts.map((p) => (p.input && Object.keys(p.input).length ? { prompt: p.prompt, input: p.input } : { prompt: p.prompt }));
      break;
    case 'map':
      request.template = c.template;
      request.items = list;
      break;
    case 'broadcast':
      request.prompt = c.prompt;
      break;
    case 'tree-reduce':
      if (list.length) {
        request.template = c.template;
        request.items = list;
      } else request.prompt = c.prompt;
      request.reducePrompt = c.reducePrompt;
      request.fanin = c.fanin;
      break;
  }
  Object.assign(request, portedRequest(c.pattern, c.patterns, c.prompt));
  if (c.model.trim()) request.model = c.model.trim();
  for (const [name] of NUMBER_FIELDS) if (c[name].trim()) request[name] = numberText(c[name]);
  if (c.system.trim()) request.system = c.system;
  const stop = c.stopText.split('\n').filter((s) => s !== '');
  if (stop.length) request.stop = stop;
  const extra = c.extraText.trim() ? extraFields(c.extraText) : null;
  if (extra) request.extra = extra;
  if (c.stream && canBatch(c.pattern)) request.stream = true;
  if (c.compare && canBatch(c.pattern)) request.compare = { rounds: c.rounds, cacheSalt: c.cacheSalt };
  return request;
}

import { AGGREGATE_NAMES, ROUTE_STRATEGIES, type AggregateName, type RouteStrategy } from '../../core/index.ts';
import type { PatternParams, StageParams } from '../../panel/protocol.ts';
import { bool, integer, list, record, string } from './validation-primitives.ts';

/** A RunRequest's `patterns` block, every field checked and nothing else carried over. */
export function patternParams(value: unknown): PatternParams {
  const p = record(value, 'patterns');
  const out: PatternParams = {};
  if (p.aggregate !== undefined) out.aggregate = oneOf(p.aggregate, AGGREGATE_NAMES, 'patterns.aggregate');
  if (p.k !== undefined) out.k = integer(p.k, 'patterns.k', 1, 10_000);
  if (p.collectPrompt !== undefined) out.collectPrompt = string(p.collectPrompt, 'patterns.collectPrompt');
  if (p.workers !== undefined) out.workers = integer(p.workers, 'patterns.workers', 1);
  if (p.stages !== undefined) out.stages = list(p.stages, 'patterns.stages').map(stage);
  if (p.input !== undefined) out.input = string(p.input, 'patterns.input');
  if (p.consecutive !== undefined) out.consecutive = bool(p.consecutive, 'patterns.consecutive');
  if (p.sections !== undefined) out.sections = list(p.sections, 'patterns.sections').map((s, i) => string(s, `patterns.sections[${i}]`));
  if (p.boardPrompt !== undefined) out.boardPrompt = string(p.boardPrompt, 'patterns.boardPrompt');
  if (p.maxRounds !== undefined) out.maxRounds = integer(p.maxRounds, 'patterns.maxRounds', 1, 1000);
  if (p.until !== undefined) out.until = string(p.until, 'patterns.until');
  return out;
}

export function routeStrategy(value: unknown): RouteStrategy {
  return oneOf(value, ROUTE_STRATEGIES, 'route');
}

function stage(value: unknown, i: number): StageParams {
  const at = `patterns.stages[${i}]`;
  const s = record(value, at);
  const out: StageParams = { name: string(s.name, `${at}.name`), template: string(s.template, `${at}.template`), agents: integer(s.agents, `${at}.agents`, 1, 100_000) };
  if (s.keep !== undefined) out.keep = string(s.keep, `${at}.keep`);
  if (s.transform !== undefined) out.transform = oneOf<AggregateName>(s.transform, AGGREGATE_NAMES, `${at}.transform`);
  return out;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (!allowed.includes(value as T)) throw new Error(`${what} must be one of ${allowed.join(', ')}`);
  return value as T;
}

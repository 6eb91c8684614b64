import type { Plan } from '../dispatch/dispatch-plan.ts';
import type { GenerationOptions } from '../pool/options.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { RunContext } from './run.ts';

/** Options every pattern takes: what to ask, and which endpoints may answer. */
export interface RunOptions extends GenerationOptions {
  /** Only endpoints carrying all these `key=value` tags. */
  tags?: Array<[string, string]>;
  /** Endpoint ids (`host:port`) the user took out of runs. */
  exclude?: readonly string[];
  /** max_tokens of reduce and collect steps, whose prompts carry many answers (default: 2 × maxTokens). */
  maxTokensAggregation?: number;
}

/** Picks the run's endpoints and model, and tells the run's watchers what was left out. */
export async function makePlan(pool: SwarmPool, options: RunOptions, ctx: RunContext): Promise<Plan> {
  const selection = await pool.select(options, options.tags ?? [], ctx.signal, options.exclude, ctx);
  ctx.setModel(selection.model);
  for (const w of selection.warnings) ctx.warn(w);
  return { pool, selection, gen: options, ctx };
}

/** Aurora-Swarm's aggregation budget for a reduce or collect step: maxTokensAggregation, else twice the usual budget. */
export function aggregationOptions(options: RunOptions): RunOptions {
  if (options.maxTokensAggregation !== undefined) return { ...options, maxTokens: options.maxTokensAggregation };
  if (options.maxTokens !== undefined) return { ...options, maxTokens: 2 * options.maxTokens };
  // Sized from the context window as usual, from twice the default budget (still clamped to what fits).
  return { ...options, defaultMaxTokens: 2 * (options.defaultMaxTokens ?? 512) };
}

/** Aurora-Swarm substitutes placeholders literally (never `str.format`); one pass, so inserted text is never rescanned. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  const keys = Object.keys(values).map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  if (!keys.length) return template;
  return template.replace(new RegExp(`\\{(${keys.join('|')})\\}`, 'g'), (_, key: string) => values[key]!);
}

import { dispatchIndividual } from '../dispatch.ts';
import { aggregationOptions, makePlan, type RunOptions } from '../plan.ts';
import type { SwarmPool } from '../pool.ts';
import type { PromptResult } from '../result.ts';
import type { RunContext } from '../run.ts';

/** The steps patterns are made of, taken inside a run (so one run can span several (sub-)pools). */

/** Every endpoint of `pool` answers `prompt` (chat path), results in the pool's order; an empty pool answers nothing. */
export async function askEach(pool: SwarmPool, prompt: string, options: RunOptions, ctx: RunContext, level?: number, input: Record<string, unknown> = {}): Promise<PromptResult[]> {
  if (!pool.endpoints.length) return [];
  const plan = await makePlan(pool, options, ctx);
  const slots = ctx.reserve(plan.selection.members.map((m) => ({ prompt, input: { ...input, endpoint: m.id } })), level);
  return dispatchIndividual(plan, slots, true);
}

/**
 * A reduce or collect step: one prompt to the pool's endpoint `index` (the others take it over if that
 * one fails), with the aggregation budget. Its failure fails the run.
 */
export async function askOne(pool: SwarmPool, prompt: string, index: number, options: RunOptions, ctx: RunContext, level?: number): Promise<string> {
  const target = pool.endpoints.at(index);
  if (!target || !Number.isInteger(index)) throw new RangeError(`endpoint index ${index} is out of range for a pool of ${pool.endpoints.length}`);
  const plan = await makePlan(pool, aggregationOptions(options), ctx);
  const members = plan.selection.members;
  const first = [...members.filter((m) => m.slot === target.slot), ...members.filter((m) => m.slot !== target.slot)];
  const [result] = await dispatchIndividual({ ...plan, selection: { ...plan.selection, members: first } }, ctx.reserve([{ prompt }], level), true);
  if (!result!.ok) throw new Error(`the ${level === undefined ? '' : `level-${level} `}reduce step failed: ${result!.error}`);
  return result!.text;
}

/** Texts of the answers that succeeded. */
export function texts(results: readonly PromptResult[]): string[] {
  return results.filter((r) => r.ok).map((r) => r.text);
}

/** Throws before any connection is made on a reduce prompt with nowhere to put the answers. */
export function checkReducePrompt(template: string): void {
  if (!template.includes('{responses}')) throw new Error('the reduce prompt must contain {responses}, where the answers to merge go');
}

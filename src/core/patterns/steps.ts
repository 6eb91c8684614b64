import { dispatchIndividual } from '../dispatch/dispatcher.ts';
import type { Plan } from '../dispatch/dispatch-plan.ts';
import { aggregationOptions, type RunOptions } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { PromptResult } from '../run/result.ts';

/**
 * The steps patterns are made of, taken inside a run on its one plan (endpoints and model picked,
 * warnings given, once per run), narrowed to a sub-pool where a step needs fewer endpoints.
 */

/** The plan's endpoints that belong to `pool` (a sub-pool of the planned one), in the sub-pool's order. */
export function within(plan: Plan, pool: SwarmPool): Plan {
  const planned = new Map(plan.selection.members.map((m) => [m.slot, m]));
  const members = pool.endpoints.flatMap((s) => planned.get(s.slot) ?? []);
  return { ...plan, selection: { ...plan.selection, members } };
}

/** Every endpoint of the plan answers `prompt` (chat path), results in order; a plan without endpoints answers nothing. */
export async function askEach(plan: Plan, prompt: string, level?: number, input: Record<string, unknown> = {}): Promise<PromptResult[]> {
  const { members } = plan.selection;
  if (!members.length) return [];
  const slots = plan.ctx.reserve(members.map((m) => ({ prompt, input: { ...input, endpoint: m.id } })), level);
  return dispatchIndividual(plan, slots, true);
}

/**
 * A reduce or collect step: one prompt to `pool`'s endpoint `index` (the plan's other endpoints take it
 * over if that one fails), with the aggregation budget. Its failure fails the run.
 */
export async function askOne(plan: Plan, pool: SwarmPool, options: RunOptions, prompt: string, index: number, level: number): Promise<string> {
  const target = Number.isInteger(index) ? pool.endpoints.at(index) : undefined;
  if (!target) throw new RangeError(`endpoint index ${index} is out of range for a pool of ${pool.endpoints.length}`);
  const members = plan.selection.members;
  const first = [...members.filter((m) => m.slot === target.slot), ...members.filter((m) => m.slot !== target.slot)];
  const reducing = { ...plan, gen: aggregationOptions(options), selection: { ...plan.selection, members: first } };
  const [result] = await dispatchIndividual(reducing, plan.ctx.reserve([{ prompt }], level), true);
  if (!result!.ok) throw new Error(`the reduce step failed: ${result!.error}`);
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

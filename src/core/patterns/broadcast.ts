import { dispatchIndividual } from '../dispatch.ts';
import { makePlan, type RunOptions } from '../plan.ts';
import type { SwarmPool } from '../pool.ts';
import { Run } from '../run.ts';

/** The same prompt to every selected endpoint (chat path); result i is endpoint i's answer. */
export function broadcast(pool: SwarmPool, prompt: string, options: RunOptions = {}): Run {
  return new Run(pool, { pattern: 'broadcast', batch: false }, async (ctx) => {
    const plan = await makePlan(pool, options, ctx);
    const slots = ctx.reserve(plan.selection.members.map((m) => ({ prompt, input: { endpoint: m.id } })));
    await dispatchIndividual(plan, slots);
  });
}

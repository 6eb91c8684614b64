import { makePlan, type RunOptions } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import { Run } from '../run/run.ts';
import { askEach } from './steps.ts';

/** The same prompt to every selected endpoint (chat path); result i is endpoint i's answer. */
export function broadcast(pool: SwarmPool, prompt: string, options: RunOptions = {}): Run {
  return new Run(pool, { pattern: 'broadcast', batch: false }, async (ctx) => {
    await askEach(await makePlan(pool, options, ctx), prompt);
  });
}

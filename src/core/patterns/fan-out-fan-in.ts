import type { RunOptions } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import { Run } from '../run/run.ts';
import { slice } from '../pool/subpool.ts';
import { gatherAndReduce, type ReducedOutcome } from './broadcast-and-reduce.ts';
import { checkReducePrompt } from './steps.ts';

export interface FanOutFanInInput {
  prompt: string;
  /** Must contain `{responses}`. */
  collectPrompt: string;
  /** The first `workers` endpoints answer (default: all). */
  workers?: number;
}

/** Aurora-Swarm's fan_out_fan_in: the first `workers` endpoints answer, the pool's endpoint 0 collects. */
export function fanOutFanIn(pool: SwarmPool, input: FanOutFanInInput, options: RunOptions = {}): Run<ReducedOutcome> {
  checkReducePrompt(input.collectPrompt);
  const workers = input.workers === undefined ? pool : slice(pool, 0, Math.max(0, input.workers));
  return new Run(pool, { pattern: 'fan-out-fan-in', batch: false }, (ctx) => gatherAndReduce(pool, workers, input.prompt, input.collectPrompt, 0, options, ctx));
}

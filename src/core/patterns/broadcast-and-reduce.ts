import { fillTemplate, makePlan, type RunOptions } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { RunContext } from '../run/run.ts';
import { Run } from '../run/run.ts';
import { askEach, askOne, checkReducePrompt, texts, within } from './steps.ts';

export interface BroadcastReduceInput {
  prompt: string;
  /** Must contain `{responses}`: the answers joined by `\n---\n`. */
  reducePrompt: string;
  /** The pool index of the endpoint that reduces (default 0). */
  reducerIndex?: number;
}

export interface ReducedOutcome {
  text: string;
  /** The answers that went into the reduce prompt. */
  answers: string[];
}

/** Aurora-Swarm's broadcast_and_reduce: every endpoint answers `prompt` (level 0), then one merges the answers (level 1). */
export function broadcastAndReduce(pool: SwarmPool, input: BroadcastReduceInput, options: RunOptions = {}): Run<ReducedOutcome> {
  checkReducePrompt(input.reducePrompt);
  return new Run(pool, { pattern: 'broadcast-and-reduce', batch: false }, (ctx) =>
    gatherAndReduce(pool, pool, input.prompt, input.reducePrompt, input.reducerIndex ?? 0, options, ctx),
  );
}

/** `workers` (a sub-pool of `pool`) answer, then `pool`'s endpoint `reducerIndex` merges what succeeded, with the aggregation budget. */
export async function gatherAndReduce(pool: SwarmPool, workers: SwarmPool, prompt: string, reducePrompt: string, reducerIndex: number, options: RunOptions, ctx: RunContext): Promise<ReducedOutcome> {
  const plan = await makePlan(pool, options, ctx);
  const answers = texts(await askEach(within(plan, workers), prompt, 0));
  if (!answers.length) throw new Error('every answer failed: nothing to reduce');
  const text = await askOne(plan, pool, options, fillTemplate(reducePrompt, { responses: answers.join('\n---\n') }), reducerIndex, 1);
  return { text, answers };
}

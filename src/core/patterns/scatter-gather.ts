import { dispatchBatched, dispatchIndividual } from '../dispatch/dispatcher.ts';
import { makePlan, type RunOptions } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import { normalizePrompts, type PromptInput, type PromptList } from '../run/result.ts';
import { Run } from '../run/run.ts';

export interface ScatterOptions extends RunOptions {
  /** Batch prompting (default): one `/v1/completions` list per endpoint; else one chat request per prompt. */
  batch?: boolean;
  /** Keep every result in the run's report (default); off for runs too large to hold (results flow through events). */
  keepResults?: boolean;
}

/** Prompt i goes to endpoint i % n; one result per prompt, in input order. */
export function scatterGather(pool: SwarmPool, prompts: ReadonlyArray<string | PromptInput> | PromptList, options: ScatterOptions = {}): Run {
  const batch = options.batch ?? true;
  const meta = { pattern: 'scatter-gather', batch, stream: Boolean(options.stream), keepResults: options.keepResults ?? true };
  return new Run(pool, meta, async (ctx) => {
    // A list that is not an array (a prompts file) is read a prompt at a time, as each is sent.
    const slots = ctx.reserve(Array.isArray(prompts) ? normalizePrompts(prompts) : (prompts as PromptList));
    const plan = await makePlan(pool, options, ctx);
    await (batch ? dispatchBatched : dispatchIndividual)(plan, slots);
  });
}

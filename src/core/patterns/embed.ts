import { dispatch } from '../dispatch/dispatcher.ts';
import { makePlan, type RunOptions } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import { normalizePrompts, type PromptInput } from '../run/result.ts';
import { Run } from '../run/run.ts';
import { byTag } from '../pool/subpool.ts';

export interface EmbedOptions extends RunOptions {
  /** As for scatterGather: off, results flow only through the run's events. */
  keepResults?: boolean;
}

/**
 * Aurora-Swarm's scatter_gather_embeddings: input i goes to endpoint i mod n, each endpoint's share
 * in `/v1/embeddings` lists, with the pool's failover; one result per input, in order, with its
 * `embedding`. Only endpoints serving the model take part, so chat and embedding servers can share a hostfile.
 */
export function embedAll(pool: SwarmPool, inputs: ReadonlyArray<string | PromptInput>, options: EmbedOptions = {}): Run {
  const meta = { pattern: 'embed', batch: true, keepResults: options.keepResults ?? true };
  // Unnamed model and no tags: the embedding servers, as Aurora-Swarm's example picks them (role=embed), if the hostfile tags any.
  const embedders = byTag(pool, 'role', 'embed');
  const servers = options.model || options.tags?.length || !embedders.endpoints.length ? pool : embedders;
  return new Run(pool, meta, async (ctx) => {
    const slots = ctx.reserve(normalizePrompts(inputs));
    const plan = await makePlan(servers, { ...options, stream: false }, ctx);
    await dispatch(plan, slots, 'embed');
  });
}

import type { GenerationOptions } from '../pool/options.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { Selection } from '../pool/selection.ts';
import type { RunContext } from '../run/run.ts';

/** One run's view of the swarm: the pool, the endpoints and model picked for it, its options. */
export interface Plan {
  pool: SwarmPool;
  selection: Selection;
  gen: GenerationOptions;
  ctx: RunContext;
}

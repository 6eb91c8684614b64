import { fillTemplate } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { Run } from '../run/run.ts';
import { scatterGather, type ScatterOptions } from './scatter-gather.ts';

/** One prompt per item, `{item}` replaced literally; each result's `input.item` names its item. */
export function mapGather(pool: SwarmPool, items: readonly unknown[], template: string, options: ScatterOptions = {}): Run {
  const prompts = items.map((item) => ({ prompt: fillTemplate(template, { item: String(item) }), input: { item } }));
  return scatterGather(pool, prompts, options);
}

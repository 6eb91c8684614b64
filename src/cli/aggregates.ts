import { aggregate, aggregateText, type AggregateName, type PromptResult } from '../core/index.ts';

export { AGGREGATE_NAMES, type AggregateName } from '../core/index.ts';

/** A named aggregate as the command line prints it (`broadcast --aggregate`, a pipeline stage's `transform`). */
export const aggregated = (name: AggregateName, results: PromptResult[], k?: number): string => aggregateText(aggregate(name, results, k));

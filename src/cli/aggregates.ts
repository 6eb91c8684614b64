import { aggregate, aggregateText, type AggregateName, type PromptResult } from '../core/index.ts';
import { terminalSafe } from './format.ts';

export { AGGREGATE_NAMES, type AggregateName } from '../core/index.ts';

/**
 * A named aggregate as the command line prints it (`broadcast --aggregate`): the servers' text made
 * terminal-safe — concat and best-of are text, the others JSON.
 */
export const aggregated = (name: AggregateName, results: PromptResult[], k?: number): string =>
  terminalSafe(aggregateText(aggregate(name, results, k)), name !== 'concat' && name !== 'best-of');

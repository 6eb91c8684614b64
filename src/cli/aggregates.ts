import { bestOf, concat, majorityVote, statistics, structuredMerge, topK, type PromptResult } from '../core/index.ts';

/**
 * The aggregators a command line can name (`broadcast --aggregate`, a pipeline stage's `transform`):
 * raw text for concat and best-of, JSON for the rest. Best-of and top-k score by length.
 */
export const AGGREGATES = {
  vote: (rs: PromptResult[]) => JSON.stringify(majorityVote(rs)),
  concat: (rs: PromptResult[]) => concat(rs),
  'best-of': (rs: PromptResult[]) => bestOf(rs, (r) => r.text.length)?.text ?? '',
  'top-k': (rs: PromptResult[], k = 3) => JSON.stringify(topK(rs, k, (r) => r.text.length).map((r) => ({ endpoint: r.endpoint, text: r.text }))),
  merge: (rs: PromptResult[]) => JSON.stringify(structuredMerge(rs)),
  stats: (rs: PromptResult[]) => JSON.stringify(statistics(rs)),
};

export type AggregateName = keyof typeof AGGREGATES;

export const AGGREGATE_NAMES = Object.keys(AGGREGATES) as AggregateName[];

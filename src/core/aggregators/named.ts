import type { PromptResult } from '../run/result.ts';
import { bestOf } from './best-of.ts';
import { concat } from './concat.ts';
import { majorityVote, type Vote } from './majority-vote.ts';
import { statistics, type Stats } from './statistics.ts';
import { structuredMerge, type Merged } from './structured-merge.ts';
import { topK } from './top-k.ts';

/**
 * The aggregators a user can name (the CLI's `--aggregate` and a pipeline stage's `transform`, the
 * panel's aggregator choice). Best-of and top-k score by length, the one score a name can carry.
 */
export const AGGREGATE_NAMES = ['vote', 'concat', 'best-of', 'top-k', 'merge', 'stats'] as const;
export type AggregateName = (typeof AGGREGATE_NAMES)[number];

/** One named aggregate of a run's answers, tagged by its name. */
export type Aggregate =
  | ({ name: 'vote' } & Vote)
  | { name: 'concat'; text: string }
  | { name: 'best-of'; best: Pick<PromptResult, 'index' | 'endpoint' | 'text'> | null }
  | { name: 'top-k'; k: number; top: Array<Pick<PromptResult, 'index' | 'endpoint' | 'text'>> }
  | ({ name: 'merge' } & Merged)
  | ({ name: 'stats' } & Stats);

const byLength = (r: PromptResult) => r.text.length;
const picked = (r: PromptResult) => ({ index: r.index, endpoint: r.endpoint, text: r.text });

export function aggregate(name: AggregateName, results: readonly PromptResult[], k = 3): Aggregate {
  switch (name) {
    case 'vote':
      return { name, ...majorityVote(results) };
    case 'concat':
      return { name, text: concat(results) };
    case 'best-of': {
      const best = bestOf(results, byLength);
      return { name, best: best ? picked(best) : null };
    }
    case 'top-k':
      return { name, k, top: topK(results, k, byLength).map(picked) };
    case 'merge':
      return { name, ...structuredMerge(results) };
    case 'stats':
      return { name, ...statistics(results) };
  }
}

/** What an aggregate comes to as one text: the chosen answer's text for concat and best-of, JSON for the rest. */
export function aggregateText(a: Aggregate): string {
  if (a.name === 'concat') return a.text;
  if (a.name === 'best-of') return a.best?.text ?? '';
  const { name: _, ...rest } = a;
  return JSON.stringify(a.name === 'top-k' ? a.top.map((t) => ({ endpoint: t.endpoint, text: t.text })) : rest);
}

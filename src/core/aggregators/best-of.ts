import { usable, type AgentAnswer } from './answers.ts';

/** The highest-scoring answer (the first of equals), or null when no answer is usable. */
export function bestOf<T extends AgentAnswer>(answers: readonly T[], score: (answer: T) => number, includeFailures = false): T | null {
  let best: T | null = null;
  let bestScore = -Infinity;
  for (const a of usable(answers, includeFailures)) {
    const s = score(a);
    if (best === null || s > bestScore) [best, bestScore] = [a, s];
  }
  return best;
}

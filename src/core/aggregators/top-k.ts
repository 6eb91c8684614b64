import { usable, type AgentAnswer } from './answers.ts';

/** The `k` highest-scoring answers, best first; equals keep their order (as Python's stable sort). */
export function topK<T extends AgentAnswer>(answers: readonly T[], k: number, score: (answer: T) => number, includeFailures = false): T[] {
  const scored = usable(answers, includeFailures).map((a) => ({ a, s: score(a) }));
  return scored.sort((x, y) => y.s - x.s).slice(0, Math.max(0, k)).map((x) => x.a);
}

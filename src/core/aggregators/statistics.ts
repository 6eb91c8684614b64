import { problem, usable, type AgentAnswer, type AnswerProblem } from './answers.ts';

export interface Stats {
  /** How many answers gave a number. */
  count: number;
  mean: number;
  /** Sample standard deviation (n − 1), 0 for a single value, as Python's statistics.stdev. */
  std: number;
  median: number;
  min: number;
  max: number;
  /** Answers that gave no number (Aurora-Swarm raises on the first; we report each and go on). */
  errors: AnswerProblem[];
}

/** The answer's text as a number, as Python's float() reads it; NaN when it is not one. */
export function numberIn(answer: AgentAnswer): number {
  const text = answer.text.trim();
  return text === '' ? NaN : Number(text);
}

/** Aurora-Swarm's statistics: mean, std, median, min and max of numeric answers; all zeros when there are none. */
export function statistics<T extends AgentAnswer>(answers: readonly T[], extract: (answer: T) => number = numberIn, includeFailures = false): Stats {
  const values: number[] = [];
  const errors: AnswerProblem[] = [];
  for (const a of usable(answers, includeFailures)) {
    const v = extract(a);
    if (Number.isNaN(v)) errors.push(problem(a, `not a number: ${JSON.stringify(a.text.slice(0, 80))}`));
    else values.push(v);
  }
  const n = values.length;
  if (!n) return { count: 0, mean: 0, std: 0, median: 0, min: 0, max: 0, errors };
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const std = n > 1 ? Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1)) : 0;
  const sorted = [...values].sort((a, b) => a - b);
  const median = n % 2 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  return { count: n, mean, std, median, min: sorted[0]!, max: sorted[n - 1]!, errors };
}

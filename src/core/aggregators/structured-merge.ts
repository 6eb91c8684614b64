import { problem, usable, type AgentAnswer, type AnswerProblem } from './answers.ts';

export interface Merged {
  /** Every answer's JSON value; arrays are flattened into the list, other values appended. */
  items: unknown[];
  /** Answers that are not JSON, with the parser's message. */
  errors: AnswerProblem[];
}

/** Aurora-Swarm's structured_merge: each answer parsed as JSON and merged into one flat list. */
export function structuredMerge(answers: readonly AgentAnswer[], includeFailures = false): Merged {
  const items: unknown[] = [];
  const errors: AnswerProblem[] = [];
  for (const a of usable(answers, includeFailures)) {
    try {
      const value: unknown = JSON.parse(a.text);
      if (Array.isArray(value)) for (const item of value as unknown[]) items.push(item);
      else items.push(value);
    } catch (err) {
      errors.push(problem(a, (err as Error).message));
    }
  }
  return { items, errors };
}

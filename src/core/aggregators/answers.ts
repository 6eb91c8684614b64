import type { PromptResult } from '../run/result.ts';

/** What an aggregator reads of a result; any PromptResult fits. */
export type AgentAnswer = Pick<PromptResult, 'ok' | 'text' | 'error' | 'endpoint' | 'index'>;

/** Which answer something is about: the run's result index and the endpoint that gave it (Aurora-Swarm's agent_index). */
export interface AnswerProblem {
  index: number;
  endpoint: string | null;
  error: string;
}

/** Every aggregator skips failed answers unless told to include them, as Aurora-Swarm's do. */
export function usable<T extends AgentAnswer>(answers: readonly T[], includeFailures = false): T[] {
  return includeFailures ? [...answers] : answers.filter((a) => a.ok);
}

export function problem(answer: AgentAnswer, error: string): AnswerProblem {
  return { index: answer.index, endpoint: answer.endpoint, error };
}

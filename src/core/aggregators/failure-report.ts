import { problem, type AgentAnswer, type AnswerProblem } from './answers.ts';

export interface FailureReport {
  total: number;
  successCount: number;
  failureCount: number;
  failures: AnswerProblem[];
}

/** Aurora-Swarm's failure_report: which answers failed and why (never filters, unlike the other aggregators). */
export function failureReport(answers: readonly AgentAnswer[]): FailureReport {
  const failures = answers.filter((a) => !a.ok).map((a) => problem(a, a.error ?? 'failed'));
  return { total: answers.length, successCount: answers.length - failures.length, failureCount: failures.length, failures };
}

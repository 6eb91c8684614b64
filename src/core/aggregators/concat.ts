import { usable, type AgentAnswer } from './answers.ts';

/** Aurora-Swarm's concat: the answers' texts joined by `separator` (default a newline). */
export function concat(answers: readonly AgentAnswer[], separator = '\n', includeFailures = false): string {
  return usable(answers, includeFailures).map((a) => a.text).join(separator);
}

import { usable, type AgentAnswer } from './answers.ts';

export interface Vote {
  /** The most frequent answer (trimmed), as its first voter wrote it; '' when there is none. */
  winner: string;
  /**
   * The winner's votes over every answer asked for, failed ones included, 0..1: one answer of
   * four, three having failed, is 0.25 — not the certainty of a unanimous vote.
   */
  confidence: number;
  /** Answers that voted, and answers that could not (they failed). */
  votes: number;
  failed: number;
  /** Every distinct answer with its votes, most votes first (ties: first seen first), as first written. */
  distribution: Array<{ answer: string; votes: number }>;
}

/** Aurora-Swarm's majority_vote: answers compared trimmed and case-insensitively; ties go to the answer seen first. */
export function majorityVote(answers: readonly AgentAnswer[], includeFailures = false): Vote {
  const tally = new Map<string, { answer: string; votes: number }>();
  const counted = usable(answers, includeFailures);
  for (const a of counted) {
    const answer = a.text.trim();
    const key = answer.toLowerCase();
    const entry = tally.get(key);
    if (entry) entry.votes++;
    else tally.set(key, { answer, votes: 1 });
  }
  const distribution = [...tally.values()].sort((a, b) => b.votes - a.votes);
  const top = distribution[0];
  return { winner: top?.answer ?? '', confidence: top ? top.votes / answers.length : 0, votes: counted.length, failed: answers.length - counted.length, distribution };
}

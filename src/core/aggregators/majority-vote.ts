import { usable, type AgentAnswer } from './answers.ts';

export interface Vote {
  /** The most frequent answer, trimmed and lower-cased; '' when there is none. */
  winner: string;
  /** The winner's share of the votes, 0..1. */
  confidence: number;
  /** Every distinct answer with its votes, most votes first (ties: first seen first). */
  distribution: Array<{ answer: string; votes: number }>;
}

/** Aurora-Swarm's majority_vote: answers compared trimmed and case-insensitively; ties go to the answer seen first. */
export function majorityVote(answers: readonly AgentAnswer[], includeFailures = false): Vote {
  const votes = new Map<string, number>();
  const counted = usable(answers, includeFailures);
  for (const a of counted) {
    const key = a.text.trim().toLowerCase();
    votes.set(key, (votes.get(key) ?? 0) + 1);
  }
  const distribution = [...votes].map(([answer, n]) => ({ answer, votes: n })).sort((a, b) => b.votes - a.votes);
  const top = distribution[0];
  return { winner: top?.answer ?? '', confidence: top ? top.votes / counted.length : 0, distribution };
}

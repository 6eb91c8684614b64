import type { Run, RunOptions, RunReport, SwarmPool } from '../../core/index.ts';
import type { PromptRow, ReduceView } from '../../panel/protocol.ts';

/** A run the user cannot start as asked (no swarm, missing input); nothing was sent or saved. */
export class LaunchError extends Error {
  override name = 'LaunchError';
}

/** What a RunRequest comes to: its name, its prompts, and the core pattern that runs it. */
export interface Prepared {
  label: string;
  /** Every prompt it answers, as rows (a broadcast's and a tree-reduce's are made as it goes). */
  prompts: PromptRow[];
  /** Prompts the run answers, known at launch, given how many endpoints it may use. */
  total(endpoints: number): number;
  make(pool: SwarmPool, options: RunOptions): Run<unknown>;
  /** A ported pattern's steps, from its finished run (tree-reduce's levels are the orchestrator's). */
  view?(report: RunReport<unknown>): ReduceView | undefined;
}

/** `3 prompts`, `1 item`: counts in a run's label. */
export const count = (n: number, noun: string) => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
/** A prompt cut to fit a run's label, on one line. */
export const clip = (s: string) => (s.length > 48 ? `${s.slice(0, 47)}…` : s).replace(/\s+/g, ' ');

/**
 * The ported patterns in the panel (the rest of Aurora-Swarm): broadcast with an aggregator,
 * fan-out/fan-in, pipeline and blackboard. Their steps (pipeline stages, blackboard rounds, workers
 * then collector) travel as a ReduceView's levels (StepView), so they are recorded, saved and shown
 * exactly as tree-reduce levels are. Types only; protocol.ts carries them in its messages.
 */
import type { Aggregate, AggregateName } from '../core/index.ts';

export type PortedPattern = 'fan-out-fan-in' | 'pipeline' | 'blackboard';

/** A pipeline stage as the panel edits it (`keep`: a regular expression an answer must match). */
export interface StageParams {
  name: string;
  template: string;
  agents: number;
  keep?: string;
  transform?: AggregateName;
}

/** The parameters of the ported patterns; the request's `pattern` says which apply. */
export interface PatternParams {
  /** broadcast: one aggregate of the answers (top-k keeps `k`). */
  aggregate?: AggregateName;
  k?: number;
  /** fan-out-fan-in: the first `workers` endpoints answer `prompt` (all when absent), endpoint 0 collects with this ({responses}). */
  collectPrompt?: string;
  workers?: number;
  /** pipeline: the first stage's {input}; consecutive: each stage takes the next endpoints. */
  stages?: StageParams[];
  input?: string;
  consecutive?: boolean;
  /** blackboard: role= sections, a prompt with {board} (and {section}), rounds, a regex that ends it. */
  sections?: string[];
  boardPrompt?: string;
  maxRounds?: number;
  until?: string;
}

/** One step of a run: a tree-reduce level, a pipeline stage, a blackboard round, a broadcast's answers. */
export interface StepView {
  level: number;
  texts: string[];
  /** What to call each text (its item, group or endpoint); absent: by position. */
  names?: string[];
  /** What to call it (absent: a tree-reduce level). */
  label?: string;
  /** The step's aggregate (a broadcast's, a pipeline stage's transform). */
  aggregate?: Aggregate;
}

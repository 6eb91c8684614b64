import {
  aggregate,
  aggregateText,
  boardText,
  type Aggregate,
  type AggregateName,
  type BlackboardOutcome,
  type PipelineOutcome,
  type PromptResult,
  type ReducedOutcome,
} from '../../core/index.ts';
import type { ReduceView, StepView } from '../../panel/protocol.ts';

/**
 * What a ported pattern did, step by step, as the panel shows tree-reduce levels (no vscode here:
 * node tests these on real runs). Steps list the answers that succeeded, in order.
 */

/** A broadcast's answers and their aggregate; nothing when no answer came. */
export function broadcastSteps(name: AggregateName, results: readonly PromptResult[], k?: number): ReduceView | undefined {
  const answers = results.filter((r) => r.ok);
  if (!answers.length) return undefined;
  const a = aggregate(name, [...results], k);
  return { text: aggregateText(a), levels: [{ level: 0, label: `Answers · ${name}`, texts: answers.map((r) => r.text), aggregate: a }] };
}

export function fanOutSteps(out: ReducedOutcome): ReduceView {
  return { text: out.text, levels: [{ level: 0, label: 'Workers', texts: out.answers }, { level: 1, label: 'Collector', texts: [out.text] }] };
}

/** Each stage's answers (results carry the stage as `level`) and, with a named transform, its aggregate. */
export function pipelineSteps(out: PipelineOutcome, results: readonly PromptResult[], aggregates: ReadonlyMap<number, Aggregate>): ReduceView {
  const levels = out.stages.map((s, i): StepView => {
    const a = aggregates.get(i);
    return { level: i, label: `Stage ${i + 1} · ${s.name} (${s.endpoints} agent${s.endpoints === 1 ? '' : 's'})`, texts: answersAt(results, i), ...(a ? { aggregate: a } : {}) };
  });
  return { text: typeof out.output === 'string' ? out.output : JSON.stringify(out.output), levels };
}

/** Each round's entries under their section's name; the final board as the answer. */
export function blackboardSteps(out: BlackboardOutcome, results: readonly PromptResult[]): ReduceView {
  const levels = out.snapshots.map(({ round }): StepView => ({
    level: round,
    label: `Round ${round}`,
    texts: results.filter((r) => r.ok && r.level === round).map((r) => `[${String(r.input.section ?? '')}] ${r.text}`),
  }));
  return { text: boardText(out.board), levels };
}

function answersAt(results: readonly PromptResult[], level: number): string[] {
  return results.filter((r) => r.ok && (r.level ?? 0) === level).map((r) => r.text);
}

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
  type ReduceOutcome,
} from '../../core/index.ts';
import type { MissingAnswer, ReduceView, StepView } from '../../panel/protocol.ts';

/**
 * What a ported pattern did, step by step, as the panel shows tree-reduce levels (no vscode here:
 * node tests these on real runs). Steps list the answers that succeeded, in order.
 */

/** A tree-reduce's levels: leaves named by item (or endpoint), groups by number; every dropped answer, and the items a failed group took with it. */
export function treeReduceSteps(out: ReduceOutcome, results: readonly PromptResult[], fanin: number, hasItems: boolean): ReduceView {
  const leafName = (i: number) => (hasItems ? `item ${i + 1}` : String(results.find((r) => r.index === i)?.input.endpoint ?? `leaf ${i + 1}`));
  const nameAt = (level: number, i: number) => (level === 0 ? leafName(i) : `group ${i + 1}`);
  // The items under each surviving answer of the level before, by its position there.
  let under: number[][] = out.levels[0]?.indexes.map((i) => [i]) ?? [];
  const missing: MissingAnswer[] = [];
  for (const l of out.levels) {
    for (const lost of l.lost) {
      const items = l.level === 0 ? undefined : under.slice(lost.index * fanin, (lost.index + 1) * fanin).flat();
      missing.push({ level: l.level, name: nameAt(l.level, lost.index), reason: lost.reason, ...(items ? { items } : {}) });
    }
    if (l.level > 0) under = l.indexes.map((g) => under.slice(g * fanin, (g + 1) * fanin).flat());
  }
  const levels = out.levels.map((l): StepView => ({ level: l.level, texts: l.texts, names: l.indexes.map((i) => nameAt(l.level, i)) }));
  return { text: out.text, levels, missing };
}

/** A broadcast's answers (named by endpoint) and their aggregate; nothing when no answer came. */
export function broadcastSteps(name: AggregateName, results: readonly PromptResult[], k?: number): ReduceView | undefined {
  const answers = results.filter((r) => r.ok);
  if (!answers.length) return undefined;
  const a = aggregate(name, [...results], k);
  return { text: aggregateText(a), levels: [{ level: 0, label: `Answers · ${name}`, texts: answers.map((r) => r.text), names: answers.map(endpointName), aggregate: a }], missing: missingAnswers(results) };
}

/** The workers named by the endpoint that answered (the core's answers are its level-0 successes, in order), then the collector. */
export function fanOutSteps(out: ReducedOutcome, results: readonly PromptResult[]): ReduceView {
  const workers = results.filter((r) => r.ok && (r.level ?? 0) === 0);
  const collector = results.find((r) => r.level === 1);
  return {
    text: out.text,
    levels: [
      { level: 0, label: 'Workers', texts: out.answers, names: workers.map(endpointName) },
      { level: 1, label: 'Collector', texts: [out.text], names: [collector ? endpointName(collector) : 'collector'] },
    ],
    missing: missingAnswers(results),
  };
}

/** Every prompt of a run that brought no answer, named by its endpoint. */
function missingAnswers(results: readonly PromptResult[]): MissingAnswer[] {
  return results.filter((r) => !r.ok || !r.text.trim()).map((r) => ({ level: r.level ?? 0, name: endpointName(r), reason: r.ok ? 'blank answer' : r.status === 'cancelled' ? 'cancelled' : (r.error ?? 'failed') }));
}

const endpointName = (r: PromptResult) => r.endpoint ?? `#${r.index + 1}`;

/** Each stage's answers (results carry the stage as `level`) and, with a named transform, its aggregate. */
export function pipelineSteps(out: PipelineOutcome, results: readonly PromptResult[], aggregates: ReadonlyMap<number, Aggregate>): ReduceView {
  const levels = out.stages.map((s, i): StepView => {
    const a = aggregates.get(i);
    const answered = answersAt(results, i);
    return { level: i, label: `Stage ${i + 1} · ${s.name} (${s.endpoints} agent${s.endpoints === 1 ? '' : 's'})`, texts: answered.map((r) => r.text), names: answered.map(endpointName), ...(a ? { aggregate: a } : {}) };
  });
  return { text: typeof out.output === 'string' ? out.output : JSON.stringify(out.output), levels, missing: missingAnswers(results) };
}

/** Each round's entries under their section's name; the final board as the answer. */
export function blackboardSteps(out: BlackboardOutcome, results: readonly PromptResult[]): ReduceView {
  const levels = out.snapshots.map(({ round }): StepView => {
    const answered = results.filter((r) => r.ok && r.level === round);
    return { level: round, label: `Round ${round}`, texts: answered.map((r) => `[${String(r.input.section ?? '')}] ${r.text}`), names: answered.map(endpointName) };
  });
  return { text: boardText(out.board), levels, missing: missingAnswers(results) };
}

function answersAt(results: readonly PromptResult[], level: number): PromptResult[] {
  return results.filter((r) => r.ok && (r.level ?? 0) === level);
}

import { dispatchIndividual } from '../dispatch/dispatcher.ts';
import { aggregationOptions, fillTemplate, makePlan, type RunOptions } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { PromptResult } from '../run/result.ts';
import { Run } from '../run/run.ts';

export interface TreeReduceInput {
  /** The leaf prompt; with `items`, a template whose `{item}` takes each item. */
  prompt: string;
  /** Must contain `{responses}`; may contain `{level}`. */
  reducePrompt: string;
  items?: readonly unknown[];
  /** Responses merged per reduce prompt (Aurora-Swarm's default: 50). */
  fanin?: number;
}

export interface ReduceLevel {
  level: number;
  texts: string[];
  /** The input index (a leaf's item, a reduce prompt's group) of each text: failed and blank answers leave gaps. */
  indexes: number[];
  /** The answers of this level that were dropped, with why. */
  lost: Array<{ index: number; reason: string }>;
}

export interface ReduceOutcome {
  text: string;
  /** Level 0: the surviving leaf answers; then what each reduce round produced. */
  levels: ReduceLevel[];
}

/**
 * Aurora-Swarm's tree-reduce: leaves (one per item, or the prompt broadcast to every endpoint),
 * then rounds that merge `fanin` answers at a time until one is left. Failed and blank answers are
 * dropped between rounds. Runs on the chat path, as Aurora-Swarm does since its fix for chat models.
 */
export function treeReduce(pool: SwarmPool, input: TreeReduceInput, options: RunOptions = {}): Run<ReduceOutcome> {
  checkTreeReduce(input);
  const fanin = input.fanin ?? 50;
  return new Run(pool, { pattern: 'tree-reduce', batch: false }, async (ctx) => {
    const plan = await makePlan(pool, options, ctx);
    const leaves = input.items
      ? input.items.map((item) => ({ prompt: fillTemplate(input.prompt, { item: String(item) }), input: { item } }))
      : plan.selection.members.map((m) => ({ prompt: input.prompt, input: { endpoint: m.id } }));
    // Reduce prompts carry many answers: they get the aggregation budget, as the docs of Aurora-Swarm say they do.
    const reducing = { ...plan, gen: aggregationOptions(options) };
    const first = survivors(0, await dispatchIndividual(plan, ctx.reserve(leaves, 0), true));
    const levels: ReduceLevel[] = [first];
    let current = first.texts;
    for (let level = 1; current.length > 1; level++) {
      const prompts = [];
      for (let i = 0; i < current.length; i += fanin) {
        const responses = current.slice(i, i + fanin).join('\n---\n');
        prompts.push({ prompt: fillTemplate(input.reducePrompt, { responses, level: String(level) }), input: { group: i / fanin } });
      }
      const next = survivors(level, await dispatchIndividual(reducing, ctx.reserve(prompts, level), true));
      levels.push(next);
      current = next.texts;
    }
    if (!current.length) throw new Error(ctx.signal.aborted ? 'cancelled' : ctx.drain.aborted ? 'drained before one answer was left' : 'nothing survived the reduction: every answer failed or was blank');
    return { text: current[0]!, levels };
  });
}

/** Throws on input that cannot reduce: before any connection is made. */
export function checkTreeReduce(input: TreeReduceInput): void {
  const fanin = input.fanin ?? 50;
  if (!input.reducePrompt.includes('{responses}')) throw new Error('the reduce prompt must contain {responses}, where the answers to merge go');
  if (!Number.isInteger(fanin) || fanin < 2) throw new Error(`fan-in must be an integer of at least 2 (got ${fanin})`);
}

/** A level's answers that go on (ok, not blank), with their leaf or group indexes, and the ones dropped. */
function survivors(level: number, results: readonly PromptResult[]): ReduceLevel {
  const out: ReduceLevel = { level, texts: [], indexes: [], lost: [] };
  for (const r of results) {
    // A run numbers its prompts across levels; a reduce prompt is known by its group.
    const index = typeof r.input.group === 'number' ? r.input.group : r.index;
    if (r.ok && r.text.trim()) {
      out.texts.push(r.text);
      out.indexes.push(index);
    } else out.lost.push({ index, reason: r.ok ? 'blank answer' : r.status === 'cancelled' ? 'cancelled' : (r.error ?? 'failed') });
  }
  return out;
}

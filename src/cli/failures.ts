import { cappedList, type PromptResult } from '../core/index.ts';
import { count, printable } from './format.ts';

/** Where a prompt sat in its pattern (`round 2 · critiques`, `stage 1 · draft`) and which one it was (its endpoint, an item). */
export type Placement = (r: PromptResult) => { step: string; which: string };

/** A prompt asked of every endpoint of a step is known by its endpoint. */
export const byEndpoint = (r: PromptResult): string => r.endpoint ?? `#${r.index + 1}`;

/** Named in a list of what failed: the first few of each step. */
const NAMED = 5;
const ERROR_CHARS = 200;

/**
 * What failed of a pattern's prompts, for stderr: how many of all, then each step that lost any
 * with how many of its prompts, which ones, and the first error. Cancelled prompts (a stop) are
 * not failures here: the stop says so itself.
 */
export function failureLines(results: readonly PromptResult[], place: Placement): string[] {
  const steps = new Map<string, { total: number; failed: PromptResult[] }>();
  for (const r of results) {
    const { step } = place(r);
    const s = steps.get(step) ?? { total: 0, failed: [] };
    s.total++;
    if (r.status === 'failed') s.failed.push(r);
    steps.set(step, s);
  }
  const lost = [...steps].filter(([, s]) => s.failed.length);
  if (!lost.length) return [];
  const failed = lost.reduce((n, [, s]) => n + s.failed.length, 0);
  const line = ([step, s]: (typeof lost)[number]) => {
    const named = s.failed.slice(0, NAMED).map((r) => place(r).which);
    const more = s.failed.length > NAMED ? `, and ${s.failed.length - NAMED} more` : '';
    const error = s.failed[0]!.error ?? 'failed';
    return `  ${step}: ${s.failed.length.toLocaleString('en-US')} of ${s.total.toLocaleString('en-US')} failed (${named.join(', ')}${more}): ${error.length > ERROR_CHARS ? `${error.slice(0, ERROR_CHARS)}…` : error}`;
  };
  return [`failed: ${failed.toLocaleString('en-US')} of ${count(results.length, 'prompt')}`, ...cappedList(lost, line).split('\n')].map(printable);
}

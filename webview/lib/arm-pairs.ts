/**
 * A comparison's two arms prompt by prompt, as promptfoo shows providers side by side: each prompt
 * once, with what each arm answered and how long it took. Pure: no DOM, so node tests it.
 */
import type { Arm, ArmShown, ResultRow } from '../../src/panel/protocol.ts';
import { latencyMs } from './results.ts';

export interface ArmCell {
  status: ResultRow['status'];
  /** The answer, or why there is none (the error). */
  text: string;
  latencyMs: number | null;
  endpoint: string | null;
}

export interface ArmPair {
  index: number;
  prompt: string;
  arms: Record<Arm, ArmCell | null>;
  /** Both arms answered (ok) and their answers differ. */
  differ: boolean;
}

/** Both arms' rows on show: which round of each, and the prompts paired. */
export interface SideBySide {
  runId: string;
  rounds: Record<Arm, ArmShown | null>;
  pairs: ArmPair[];
  /** Prompts both arms answered, with different answers. */
  differing: number;
}

const cellOf = (r: ResultRow): ArmCell => ({ status: r.status, text: r.ok ? r.text : (r.error ?? r.status), latencyMs: latencyMs(r), endpoint: r.endpoint });

/** Pairs the arms' rows by input index, in input order; a prompt one arm lacks has null there. */
export function pairArms(runId: string, batched: { arm: ArmShown | null; rows: readonly ResultRow[] }, individual: { arm: ArmShown | null; rows: readonly ResultRow[] }): SideBySide {
  const byIndex = new Map<number, ArmPair>();
  const pairOf = (r: ResultRow) => {
    let p = byIndex.get(r.index);
    if (!p) byIndex.set(r.index, (p = { index: r.index, prompt: r.prompt, arms: { batched: null, individual: null }, differ: false }));
    return p;
  };
  for (const r of batched.rows) pairOf(r).arms.batched = cellOf(r);
  for (const r of individual.rows) pairOf(r).arms.individual = cellOf(r);
  const pairs = [...byIndex.values()].sort((a, b) => a.index - b.index);
  let differing = 0;
  for (const p of pairs) {
    const { batched: b, individual: i } = p.arms;
    p.differ = Boolean(b && i && b.status === 'ok' && i.status === 'ok' && b.text !== i.text);
    if (p.differ) differing++;
  }
  return { runId, rounds: { batched: batched.arm, individual: individual.arm }, pairs, differing };
}

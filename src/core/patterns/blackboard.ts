import { fillTemplate, makePlan, type RunOptions } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import { Run } from '../run/run.ts';
import { byTag } from '../pool/subpool.ts';
import { askEach, texts, within } from './steps.ts';

/** Each section's entries, oldest first. */
export type Board = Record<string, string[]>;

export interface BlackboardInput {
  /** Section names; endpoints tagged `role=<section>` write to that section. */
  sections: readonly string[];
  /** The prompt a section's endpoints get, given the board so far (later sections see this round's earlier entries). */
  prompt: (section: string, board: Readonly<Board>) => string;
  /** Default 10. */
  maxRounds?: number;
  /** Checked after each round: true stops the session. */
  converged?: (board: Readonly<Board>) => boolean;
}

export interface BlackboardOutcome {
  board: Board;
  rounds: number;
  /** The board after each round (deep copies). */
  snapshots: Array<{ round: number; board: Board }>;
}

/**
 * A session from a prompt template (the CLI's config file, the panel's fields): `{section}` takes the
 * section's name and `{board}` every entry so far; it ends early once an entry matches `until`.
 */
export function templatedSession(sections: readonly string[], template: string, maxRounds: number, until?: RegExp): BlackboardInput {
  return {
    sections,
    prompt: (section, board) => fillTemplate(template, { section, board: boardText(board) }),
    maxRounds,
    ...(until ? { converged: (board: Readonly<Board>) => Object.values(board).some((entries) => entries.some((e) => until.test(e))) } : {}),
  };
}

/** The board as a prompt (and a person) sees it: each section's entries under its name. */
export function boardText(board: Readonly<Board>): string {
  return Object.entries(board)
    .map(([section, entries]) => `## ${section}\n${entries.map((e) => `- ${e}`).join('\n') || '(empty)'}`)
    .join('\n\n');
}

/**
 * Aurora-Swarm's Blackboard.run: rounds in which each section in turn asks its `role=` endpoints
 * one prompt and appends their answers; results carry the round as `level` and the section in `input`.
 */
export function blackboard(pool: SwarmPool, input: BlackboardInput, options: RunOptions = {}): Run<BlackboardOutcome> {
  return new Run(pool, { pattern: 'blackboard', batch: false }, async (ctx) => {
    const plan = await makePlan(pool, options, ctx);
    const writers = new Map(input.sections.map((s) => [s, within(plan, byTag(pool, 'role', s))]));
    const board: Board = Object.fromEntries(input.sections.map((s) => [s, []]));
    const snapshots: BlackboardOutcome['snapshots'] = [];
    for (let round = 1; round <= (input.maxRounds ?? 10) && !ctx.signal.aborted; round++) {
      for (const section of input.sections) {
        const results = await askEach(writers.get(section)!, input.prompt(section, board), round, { section });
        for (const text of texts(results)) board[section]!.push(text);
      }
      snapshots.push({ round, board: structuredClone(board) });
      if (input.converged?.(board)) break;
    }
    return { board, rounds: snapshots.length, snapshots };
  });
}

/**
 * What the panel keeps across reloads through `vscode.setState` (VS Code's webview serializer
 * hands it back): the tab, the composition, the filters, and the run on show when it is small.
 */
import type { ArmRound, ComparisonView, Pattern, ReduceView, ResultRow, RunContext, RunKind, RunRecord, ServerLoad } from '../src/panel/protocol.ts';

type RunSummary = RunRecord['summary'];
import { defaultCompose, type ComposeState } from './lib/compose.ts';
import { noFilter, type ResultFilter } from './lib/results.ts';

export const TABS = ['compose', 'results', 'tree', 'compare', 'history'] as const;
export type Tab = (typeof TABS)[number];

/** The run on show, live or reopened from history, as the host stated it. */
export interface RunView {
  /** The host's run id, which is also its record's id. */
  id: string;
  kind: RunKind;
  label: string;
  pattern: Pattern;
  startedAt: string | null;
  /** What it ran on; null for records saved before runs kept it. */
  context: RunContext | null;
  rounds: number;
  /** A comparison: the arm and round (from 0, as the core counts) whose rows the table holds — live, the arm going. */
  arm?: ArmRound['arm'];
  round?: number;
  running: boolean;
  /** Its record is in history. */
  saved: boolean;
  done: number;
  ok: number;
  failed: number;
  total: number;
  elapsedMs: number;
  /** While an unstreamed batch runs: its servers' latest `/metrics` reading (the host's). */
  servers?: ServerLoad;
  summary: RunSummary | null;
  error: string | null;
  cancelled: boolean;
  /** Drained: what was in flight finished, the prompts not sent are cancelled (absent: not drained). */
  drained?: boolean;
  /** A detached run shown while it goes on outside the editor (`running` stays false: nothing here to cancel or drain). */
  detachedGoing?: boolean;
}

/** A comparison and the run it belongs to. */
export interface ComparisonOf {
  runId: string;
  label: string;
  view: ComparisonView;
}

export interface SavedRun {
  view: RunView;
  total: number;
  rows: ResultRow[] | null;
  reduce: ReduceView | null;
  comparison: ComparisonOf | null;
}

export interface UiState {
  /** 2: run views keyed by the host's run id (1 guessed them). */
  v: 2;
  tab: Tab;
  compose: ComposeState;
  filter: ResultFilter;
  /** Run ids picked in History for Compare. */
  picked: string[];
  timelineRound: number;
  /** Whether `compose` was ever filled from the host's defaults. */
  defaultsApplied: boolean;
  saved: SavedRun | null;
}

export function freshState(): UiState {
  return { v: 2, tab: 'compose', compose: defaultCompose(), filter: noFilter(), picked: [], timelineRound: 1, defaultsApplied: false, saved: null };
}

/** The saved state if it is ours and whole; fields it lacks take their defaults. */
export function restoreState(saved: unknown): UiState {
  const fresh = freshState();
  if (typeof saved !== 'object' || saved === null || (saved as { v?: unknown }).v !== 2) return fresh;
  const s = saved as Partial<UiState>;
  return {
    v: 2,
    tab: TABS.includes(s.tab as Tab) ? (s.tab as Tab) : fresh.tab,
    compose: { ...fresh.compose, ...(typeof s.compose === 'object' && s.compose ? s.compose : {}) },
    filter: { ...fresh.filter, ...(typeof s.filter === 'object' && s.filter ? s.filter : {}) },
    picked: Array.isArray(s.picked) ? s.picked.filter((x) => typeof x === 'string').slice(0, 2) : [],
    timelineRound: typeof s.timelineRound === 'number' ? s.timelineRound : 1,
    defaultsApplied: s.defaultsApplied === true,
    saved: typeof s.saved === 'object' && s.saved ? s.saved : null,
  };
}

/**
 * Rows are kept in the state only while they are this small: VS Code keeps the state as JSON and
 * setState serializes it on the page's thread (10,000 rows held a frame for seconds). A bigger run
 * is asked of the host again after a reload (openRun), as a run still going is resynced.
 */
export const SAVE_ROWS_MAX = 2_000;
export const SAVE_CHARS_MAX = 500_000;

export function smallEnough(rows: readonly ResultRow[]): boolean {
  if (rows.length > SAVE_ROWS_MAX) return false;
  let chars = 0;
  for (const r of rows) {
    chars += r.prompt.length + r.text.length + (r.error?.length ?? 0) + 200;
    if (chars > SAVE_CHARS_MAX) return false;
  }
  return true;
}

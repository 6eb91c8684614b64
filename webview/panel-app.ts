/**
 * What the views see of the panel: its state (read only) and what they may ask of it. Views import
 * this type, never App itself, so there is no import circle between app.ts and views/.
 */
import type { Arm, PromptRow, Requests } from '../src/panel/protocol.ts';
import type { Theme } from './charts/specs.ts';
import type { ComposeState } from './lib/compose.ts';
import type { ResultFilter } from './lib/results.ts';
import type { Tab } from './state.ts';
import type { LocalAction, Notice, ViewState } from './view-state.ts';

export interface PanelApp {
  readonly state: ViewState;
  readonly theme: Theme;
  /** A run is going (a comparison between its arms too). */
  readonly running: boolean;
  readonly batchAllowed: boolean;
  dispatch(action: LocalAction): void;
  /** Renders again at the next frame (a view's own state changed, e.g. "show all"). */
  invalidate(): void;
  /** Renders now (focus moves that need the DOM at once); otherwise renders wait for the next frame. */
  renderNow(): void;
  setTab(tab: Tab): void;
  setCompose(patch: Partial<ComposeState>): void;
  setFilter(patch: Partial<ResultFilter>): void;
  say(text: string, kind?: Notice['kind']): void;
  startRun(): void;
  /** "Run on the cluster": the composition started detached where the swarm is; History then shows it. */
  startDetachedRun(): Promise<void>;
  cancelRun(): void;
  drainRun(): void;
  copy(text: string): void;
  /**
   * The run on show's rows at `indices` (null: every one) whole, in place of cut ones (RowCut);
   * resolves once they are in, at once when none is cut.
   */
  wholeRows(indices: number[] | null): Promise<void>;
  openInEditor(text: string, language?: string): void;
  importFile(): Promise<void>;
  importRows(): PromptRow[];
  finishImport(append: boolean): void;
  savePromptSet(): Promise<void>;
  openRun(id: string): Promise<void>;
  /** The comparison on show, its other arm's rows (the kept round's, from its saved files). */
  showArm(arm: Arm): Promise<void>;
  /** The comparison on show, both arms' kept rounds prompt by prompt. */
  showBothArms(): Promise<void>;
  rerun(id: string): void;
  /** A new run of a saved run's failed (or cancelled) prompts, merged back (continueRun). */
  continueRun(id: string, only: 'failed' | 'remaining'): void;
  exportRun(id: string, format: 'jsonl' | 'csv'): Promise<void>;
  compareRuns(): Promise<void>;
  ask<M extends keyof Requests>(method: M, params: Requests[M]['params']): Promise<Requests[M]['result'] | undefined>;
}

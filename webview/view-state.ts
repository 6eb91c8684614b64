/**
 * The panel's view state and the one function that changes it: `reduce(state, action)`, over the
 * host's messages (the run's lifecycle as the host states it) and the panel's own actions. No DOM,
 * no timers, no posting, so node tests it; App renders what it returns. The one exception to
 * "returns new values": a run's rows are appended to its ResultsStore in place (a 100,000-row run is
 * not copied on every progress message); a new run gets a new store.
 */
import type { ArmShown, ComparisonView, EndpointInfo, HistoryEntry, OpenedRun, PanelState, ReduceView, Requests, ResultRow, RunRecord } from '../src/panel/protocol.ts';
import { parseRows } from '../src/panel/result-rows.ts';

type RunSummary = RunRecord['summary'];
import type { ComposeState } from './lib/compose.ts';
import type { Inbound } from './lib/inbox.ts';
import type { ImportResult } from './lib/import.ts';
import { noFilter, ResultsStore, type ResultFilter } from './lib/results.ts';
import type { SideBySide } from './lib/arm-pairs.ts';
import type { ComparisonOf, RunView, Tab, UiState } from './state.ts';

export interface Notice {
  text: string;
  kind: 'info' | 'error';
}

export interface ImportDialog {
  result: ImportResult;
  column: string;
}

export type RunsComparison = Requests['compareRuns']['result'];

export interface ViewState {
  ui: UiState;
  /** Before `init`: the panel shows the composition it had, with no endpoints. */
  initialized: boolean;
  connected: boolean;
  source: string | null;
  endpoints: EndpointInfo[];
  defaults: PanelState['defaults'];
  history: HistoryEntry[];
  run: RunView | null;
  store: ResultsStore;
  reduce: ReduceOf;
  comparison: ComparisonOf | null;
  /** A saved comparison's arms prompt by prompt, when asked for (Results' arm switch). */
  sideBySide: SideBySide | null;
  runsComparison: RunsComparison | null;
  importDialog: ImportDialog | null;
  notice: Notice | null;
  selectedPrompt: number;
  composeVersion: number;
  /** The run on show came back from a reload without all of it (rows too big to keep, or a snapshot taken mid-run). */
  stale: boolean;
}

type ReduceOf = ReduceView | null;

/** What the panel does by itself (host messages are actions too). */
export type LocalAction =
  /** A run from History, in full (the openRun reply); `ifShowing`: only while that run is still on show (a reopen after a reload). */
  | { type: 'opened'; run: OpenedRun; ifShowing?: string }
  | { type: 'refused'; error: string }
  | { type: 'tab'; tab: Tab }
  | { type: 'compose'; patch: Partial<ComposeState> }
  | { type: 'filter'; patch: Partial<ResultFilter> }
  | { type: 'notice'; notice: Notice | null }
  | { type: 'selectPrompt'; index: number }
  | { type: 'importDialog'; dialog: ImportDialog | null }
  | { type: 'runsComparison'; value: RunsComparison | null }
  /** Both arms paired (null: back to one arm's rows); dropped if another run came on show meanwhile. */
  | { type: 'sideBySide'; value: SideBySide | null }
  | { type: 'pick'; id: string; on: boolean }
  | { type: 'timelineRound'; round: number }
  /** Rows of `runId` whole (the fullRows reply), in place of the cut ones it has. */
  | { type: 'wholeRows'; runId: string; rows: ResultRow[] };

/** The host's messages (a runProgress with its rows read: see Inbox) and the panel's own. */
export type Action = Exclude<Inbound, { type: 'reply' }> | LocalAction;

/** The state a panel starts from: what it kept before a reload (see state.ts). */
export function initialState(ui: UiState): ViewState {
  const saved = ui.saved;
  const store = new ResultsStore();
  if (saved) store.reset(saved.total, saved.rows ?? []);
  return {
    ui,
    initialized: false,
    connected: false,
    source: null,
    endpoints: [],
    defaults: { model: '', maxTokens: null, batching: true },
    history: [],
    // A snapshot never shows as running: a run still going is resynced by the host after `init`.
    run: saved ? { ...saved.view, running: false } : null,
    store,
    reduce: saved?.reduce ?? null,
    comparison: saved?.comparison ?? null,
    sideBySide: null,
    runsComparison: null,
    importDialog: null,
    notice: null,
    selectedPrompt: -1,
    composeVersion: 0,
    // A detached run that went on is asked for again: it has moved while the panel was away.
    stale: Boolean(saved && (saved.view.running || saved.view.detachedGoing || (!saved.rows && saved.total > 0))),
  };
}

/** After `init`: the saved run to ask the host for again (it has a record, and the state lacks some of it), if any. */
export function reopenId(s: ViewState): string | null {
  const id = s.run?.id;
  return s.stale && id && s.history.some((h) => h.id === id) ? id : null;
}

export function reduce(s: ViewState, a: Action): ViewState {
  switch (a.type) {
    case 'init': {
      const st = a.state;
      const ui = !s.ui.defaultsApplied ? { ...s.ui, compose: { ...s.ui.compose, batch: st.defaults.batching }, defaultsApplied: true } : s.ui;
      return withHistory({ ...s, ui, initialized: true, connected: st.connected, source: st.source, endpoints: st.endpoints, defaults: st.defaults }, st.history);
    }
    case 'endpoints':
      return { ...s, connected: a.connected, source: a.source, endpoints: a.endpoints };
    case 'endpointStatus': {
      const changed = new Map(a.changes);
      return { ...s, endpoints: s.endpoints.map((e) => (changed.has(e.id) ? { ...e, status: changed.get(e.id)! } : e)) };
    }
    case 'history':
      return withHistory(s, a.history);
    case 'runStarted': {
      const same = s.run?.id === a.runId; // a resync of the run on show keeps its filters
      const run: RunView = {
        id: a.runId,
        kind: a.kind,
        label: a.label,
        pattern: a.pattern,
        startedAt: a.startedAt,
        context: a.context,
        rounds: a.rounds,
        running: true,
        saved: false,
        done: 0,
        ok: 0,
        failed: 0,
        total: a.total,
        elapsedMs: 0,
        summary: null,
        error: null,
        cancelled: false,
      };
      const comparison = a.comparison ? (s.comparison?.runId === a.runId ? s.comparison : { runId: a.runId, label: a.label, view: { ...a.comparison, rounds: [] } }) : s.comparison;
      // A run going shows on Results: the steps tab has nothing until the run's end brings its steps
      // (runFinished opens it then), and held on from a pattern run it said "No steps yet" over a scatter.
      const tab = s.ui.tab === 'compose' || s.ui.tab === 'history' || s.ui.tab === 'tree' ? 'results' : s.ui.tab;
      // A scatter from the palette fills an empty Compose with its prompts, so Run can run them again.
      const adopt = a.pattern === 'scatter' && a.prompts?.length && !s.ui.compose.prompts.length;
      const compose = adopt ? { ...s.ui.compose, pattern: 'scatter' as const, prompts: a.prompts!.map((prompt) => ({ prompt })) } : s.ui.compose;
      return {
        ...s,
        run,
        store: freshStore(a.total, a.prompts),
        reduce: null,
        comparison,
        sideBySide: null,
        stale: false,
        notice: s.notice?.kind === 'info' ? null : s.notice,
        composeVersion: adopt ? s.composeVersion + 1 : s.composeVersion,
        ui: { ...s.ui, tab, compose, ...(same ? {} : { filter: noFilter(), timelineRound: comparison !== s.comparison ? 1 : s.ui.timelineRound }) },
      };
    }
    case 'armStarted':
      if (s.run?.id !== a.runId) return s;
      return { ...s, run: { ...s.run, arm: a.arm, round: a.round, done: 0, ok: 0, failed: 0, elapsedMs: 0, servers: undefined }, store: freshStore(s.run.total, s.store.prompts) };
    case 'runProgress': {
      if (s.run?.id !== a.runId) return s;
      s.store.add(a.results);
      s.store.setTotal(a.total);
      return { ...s, run: { ...s.run, done: a.done, ok: a.ok, failed: a.failed, total: a.total, elapsedMs: a.elapsedMs, ...(a.servers ? { servers: a.servers } : {}) } };
    }
    case 'armFinished': {
      const c = s.comparison;
      if (!c || c.runId !== a.runId || !a.figures) return a.cancelled && s.run?.id === a.runId ? { ...s, notice: { text: 'Comparison cancelled; the rounds that finished are kept.', kind: 'info' } } : s;
      const first = c.view.rounds.length === 0;
      const view = { ...c.view, rounds: [...c.view.rounds, a.figures] };
      // The Comparison tab comes forward with the run's first figures, once.
      return { ...s, comparison: { ...c, view }, ui: first ? { ...s.ui, tab: 'compare' } : s.ui };
    }
    case 'runFinished': {
      const next = withHistory(s, s.history.some((h) => h.id === a.record.id) ? s.history : [a.record, ...s.history]);
      if (s.run?.id !== a.runId) return next;
      const r = a.record;
      const shown = a.rows?.arm;
      const summary = armSummary(a.comparison, shown) ?? r.summary;
      // Every prompt of a finished run has settled (ok, failed or cancelled): its counts are its summary's.
      const run: RunView = { ...s.run, running: false, saved: true, summary, done: summary.prompts, total: Math.max(s.run.total, summary.prompts), ok: summary.ok, failed: summary.failed, error: r.error ?? null, cancelled: r.cancelled ?? false, drained: r.drained ?? false, elapsedMs: summary.wallMs, ...(shown ? { arm: shown.arm, round: shown.round } : {}) };
      const comparison = a.comparison ? { runId: a.runId, label: r.label, view: a.comparison } : next.comparison;
      const notice: Notice | null = run.cancelled ? { text: 'Run cancelled; the answers that came back are kept.', kind: 'info' } : run.error ? { text: `Run failed: ${run.error}`, kind: 'error' } : next.notice;
      // A comparison's table held its last arm live; the rows its record keeps take their place.
      const store = a.rows ? storeOf(parseRows(a.rows.resultsJsonl)) : next.store;
      return { ...next, run, store, comparison, notice, reduce: a.reduce ?? null, ui: a.reduce ? { ...next.ui, tab: 'tree' } : next.ui };
    }
    case 'showRun':
      // A detached run's rows sent again as they land stay on the tab the user is on.
      return show(s, a, Boolean(a.record.detached) && s.run?.id === a.record.id);
    case 'wholeRows': {
      if (s.run?.id !== a.runId) return s;
      // Only in place of a row still cut: one that came whole meanwhile (a later arm, a rerun) stays.
      const rows = a.rows.filter((r) => s.store.rows[r.index]?.cut);
      if (!rows.length) return s;
      s.store.add(rows);
      return { ...s };
    }
    case 'opened':
      if (a.ifShowing !== undefined && s.run?.id !== a.ifShowing) return s; // a live run took its place meanwhile
      return show(s, a.run, a.ifShowing !== undefined);
    case 'refused':
      return { ...s, notice: { text: `The run did not start: ${a.error}`, kind: 'error' } };
    case 'tab':
      return s.ui.tab === a.tab ? s : { ...s, ui: { ...s.ui, tab: a.tab } };
    case 'compose':
      return { ...s, ui: { ...s.ui, compose: { ...s.ui.compose, ...a.patch } }, composeVersion: a.patch.prompts ? s.composeVersion + 1 : s.composeVersion };
    case 'filter':
      return { ...s, ui: { ...s.ui, filter: { ...s.ui.filter, ...a.patch } } };
    case 'notice':
      return { ...s, notice: a.notice };
    case 'selectPrompt':
      return { ...s, selectedPrompt: a.index };
    case 'importDialog':
      return { ...s, importDialog: a.dialog };
    case 'runsComparison':
      return { ...s, runsComparison: a.value };
    case 'sideBySide':
      return a.value && a.value.runId !== s.run?.id ? s : { ...s, sideBySide: a.value };
    case 'pick': {
      const picked = s.ui.picked.filter((x) => x !== a.id);
      if (a.on) picked.push(a.id);
      return { ...s, ui: { ...s.ui, picked: picked.slice(-2) } };
    }
    case 'timelineRound':
      return { ...s, ui: { ...s.ui, timelineRound: a.round } };
  }
}

/** A finished run, in full; `keepTab` for a reopen after a reload (the panel stays where it was). */
function show(s: ViewState, o: OpenedRun, keepTab: boolean): ViewState {
  const r = o.record;
  const results = parseRows(o.resultsJsonl);
  const same = s.run?.id === r.id;
  // Records from before runs kept how they ended: their summary and rows say whether they were cancelled.
  const cancelledRows = () => results.reduce((n, x) => n + (x.status === 'cancelled' ? 1 : 0), 0);
  const summary = armSummary(o.comparison, o.arm) ?? r.summary;
  const going = detachedGoing(r);
  const run: RunView = {
    id: r.id,
    kind: r.mode === 'compare' ? 'comparison' : 'single',
    label: r.label,
    pattern: r.pattern,
    startedAt: r.startedAt,
    context: r.context ?? null,
    rounds: o.comparison ? Math.max(1, ...o.comparison.rounds.map((x) => x.round + 1)) : 1,
    running: false,
    saved: true,
    // A detached run still going: how far it is, from its status file (its rows so far are in the table).
    done: going ? r.detached!.done : results.length,
    ok: summary.ok,
    failed: summary.failed,
    total: going ? summary.prompts : results.length,
    elapsedMs: summary.wallMs,
    summary,
    error: r.error ?? null,
    cancelled: r.cancelled ?? ((r.summary.cancelled ?? 0) > 0 || cancelledRows() > 0),
    drained: r.drained ?? false,
    ...(o.arm ? { arm: o.arm.arm, round: o.arm.round } : {}),
    ...(going ? { detachedGoing: true } : {}),
  };
  const store = storeOf(results);
  const comparison = o.comparison ? { runId: r.id, label: r.label, view: o.comparison } : s.comparison;
  // A comparison opens on its figures and charts, a tree-reduce on its tree, any other run on its responses.
  const tab = keepTab ? s.ui.tab : o.comparison ? 'compare' : o.reduce ? 'tree' : 'results';
  return { ...s, run, store, reduce: o.reduce ?? null, comparison, sideBySide: null, stale: false, ui: { ...s.ui, tab, ...(same ? {} : { filter: noFilter() }) } };
}

function withHistory(s: ViewState, history: HistoryEntry[]): ViewState {
  const ids = new Set(history.map((h) => h.id));
  const saved = s.run !== null && !s.run.saved && ids.has(s.run.id);
  // Picks of runs deleted meanwhile go with them.
  const picked = s.ui.picked.filter((id) => ids.has(id));
  return { ...s, history, run: saved ? { ...s.run!, saved: true } : s.run, ui: picked.length === s.ui.picked.length ? s.ui : { ...s.ui, picked } };
}

/** The figures of a comparison's arm and round whose rows are on show (the record's summary is its batched arm's median round). */
function armSummary(c: ComparisonView | undefined, shown: ArmShown | undefined): RunSummary | undefined {
  return shown && c?.rounds.find((x) => x.arm === shown.arm && x.round === shown.round)?.summary;
}

function storeOf(rows: readonly ResultRow[]): ResultsStore {
  const store = new ResultsStore();
  store.reset(rows.length, rows);
  return store;
}

function freshStore(total: number, prompts: readonly string[] = []): ResultsStore {
  const store = new ResultsStore();
  store.reset(total, [], prompts);
  return store;
}

/** A detached run that goes on where it lives (its status says so, or it runs on another host of the login): it is no run of this panel's, yet it is not done. */
function detachedGoing(r: RunRecord): boolean {
  return r.detached !== undefined && r.detached.state !== 'finished' && r.detached.state !== 'died';
}

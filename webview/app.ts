/**
 * The panel: its state, the host's messages, and one render per animation frame (however fast
 * runProgress arrives). Views are Lit templates (text bindings only); the big tables and the
 * charts are custom elements that draw themselves.
 */
import { render } from 'lit';
import type { ComparisonView, EndpointInfo, HostMessage, PanelState, RunRecord, Requests } from '../src/panel/protocol.ts';
import { isHostMessage, loadState, post, request, saveState, settleReply } from './api.ts';
import { buildRunRequest, canBatch, type ComposeState } from './lib/compose.ts';
import { parsePromptFile, rowsFromTable, type ImportResult } from './lib/import.ts';
import { ResultsStore, type ResultFilter } from './lib/results.ts';
import { readTheme, type Theme } from './charts/specs.ts';
import { restoreState, smallEnough, TABS, type RunView, type SavedRun, type Tab, type UiState } from './state.ts';
import { appView } from './views/app-view.ts';

export interface Notice {
  text: string;
  kind: 'info' | 'error';
}

export interface ImportDialog {
  result: ImportResult;
  column: string;
}

export type RunsComparison = Requests['compareRuns']['result'];

export class App {
  ui: UiState;
  /** Before `init`: the panel shows the composition it had, with no endpoints. */
  initialized = false;
  connected = false;
  source: string | null = null;
  endpoints: EndpointInfo[] = [];
  defaults: PanelState['defaults'] = { model: '', maxTokens: null, batching: true };
  history: RunRecord[] = [];
  run: RunView | null = null;
  readonly store = new ResultsStore();
  reduce: SavedRun['reduce'] = null;
  comparison: ComparisonView | null = null;
  runsComparison: RunsComparison | null = null;
  importDialog: ImportDialog | null = null;
  notice: Notice | null = null;
  selectedPrompt = -1;
  composeVersion = 0;
  theme: Theme;
  /**
   * The comparison going: its run id (every arm's runStarted carries it), from its first arm until
   * its record is in history (or an arm is cancelled or fails). Arms come one after the other, each
   * with its own runFinished and a `comparison` of the rounds so far; none of those ends it.
   */
  private comparingId: string | null = null;
  /** A saved run asked for again after a reload (openRun), whose showRun is to come. */
  private reopening: string | null = null;
  /** A reopen overtaken by a live run: its showRun must not replace the live run. */
  private dropShowOf: string | null = null;
  /** The run whose comparison already brought the Comparison tab forward (once per run). */
  private comparisonShownFor: string | null = null;
  private frame = 0;
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private noticeTimer: ReturnType<typeof setTimeout> | undefined;
  /** "Comparing batched and individual…": on show from Run until the comparison ends. */
  private compareNotice: Notice | null = null;

  constructor(private readonly root: HTMLElement) {
    this.ui = restoreState(loadState());
    this.theme = readTheme();
    const saved = this.ui.saved;
    if (saved) {
      this.run = { ...saved.view, running: false };
      this.store.reset(saved.total, saved.rows ?? []);
      this.reduce = saved.reduce;
      this.comparison = saved.comparison;
    }
  }

  start(): void {
    window.addEventListener('message', (e: MessageEvent) => {
      if (isHostMessage(e.data)) this.onMessage(e.data);
    });
    new MutationObserver(() => {
      this.theme = readTheme();
      this.invalidate();
    }).observe(document.body, { attributes: true, attributeFilter: ['class'] });
    window.addEventListener('pagehide', () => this.saveNow());
    this.renderNow();
    post({ type: 'ready' });
  }

  /** Renders at most once per animation frame. */
  invalidate(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderNow();
    });
  }

  renderNow(): void {
    render(appView(this), this.root);
  }

  // ---- state ------------------------------------------------------------------------------

  /** Saves the UI state soon (typing does not write it on every key). */
  persist(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.saveNow(), 300);
  }

  saveNow(): void {
    clearTimeout(this.saveTimer);
    saveState(this.ui);
  }

  setTab(tab: Tab): void {
    if (this.ui.tab === tab) return;
    this.ui.tab = tab;
    this.persist();
    this.invalidate();
  }

  setCompose(patch: Partial<ComposeState>): void {
    this.ui.compose = { ...this.ui.compose, ...patch };
    if (patch.prompts) this.composeVersion++;
    this.persist();
    this.invalidate();
  }

  setFilter(patch: Partial<ResultFilter>): void {
    this.ui.filter = { ...this.ui.filter, ...patch };
    this.persist();
    this.invalidate();
  }

  say(text: string, kind: Notice['kind'] = 'info'): void {
    this.notice = { text, kind };
    clearTimeout(this.noticeTimer);
    if (kind === 'info') this.noticeTimer = setTimeout(() => {
      this.notice = null;
      this.invalidate();
    }, 6000);
    this.invalidate();
  }

  // ---- host messages ----------------------------------------------------------------------

  onMessage(m: HostMessage): void {
    if (settleReply(m)) return;
    switch (m.type) {
      case 'init':
        this.initialized = true;
        this.setEndpoints(m.state.connected, m.state.source, m.state.endpoints);
        this.defaults = m.state.defaults;
        this.history = m.state.history;
        if (!this.ui.defaultsApplied) {
          this.ui.compose = { ...this.ui.compose, batch: m.state.defaults.batching };
          this.ui.defaultsApplied = true;
          this.persist();
        }
        this.reopenSaved();
        break;
      case 'endpoints':
        this.setEndpoints(m.connected, m.source, m.endpoints);
        break;
      case 'runStarted':
        if (m.arm) {
          if (this.comparingId !== m.runId) {
            // A new comparison: its rounds start from nothing (a resync of the one on show keeps them).
            if (this.run?.runId !== m.runId) {
              this.comparison = null;
              this.ui.timelineRound = 1;
            }
            this.comparingId = m.runId;
          }
        } else {
          // Runs go one at a time: a run that is no arm means no comparison is going any more.
          this.endComparison();
        }
        if (this.reopening && this.reopening !== m.runId) this.dropShowOf = this.reopening;
        this.reopening = null;
        this.run = {
          runId: m.runId,
          recordId: null,
          label: m.label,
          pattern: m.pattern,
          ...(m.arm ? { arm: m.arm } : {}),
          ...(m.round !== undefined ? { round: m.round } : {}),
          running: true,
          done: 0,
          ok: 0,
          failed: 0,
          total: m.total,
          elapsedMs: 0,
          summary: null,
          error: null,
          cancelled: false,
        };
        this.store.reset(m.total);
        this.reduce = null;
        if (m.arm && this.notice && this.notice === this.compareNotice) {
          // The comparison started: its notice stays until it ends (no timeout meanwhile).
          clearTimeout(this.noticeTimer);
        } else if (this.notice?.kind === 'info') {
          this.notice = null;
        }
        if (this.ui.tab === 'compose' || this.ui.tab === 'history') this.ui.tab = 'results';
        this.ui.saved = null;
        this.persist();
        break;
      case 'runProgress':
        if (!this.run || this.run.runId !== m.runId) break;
        this.store.add(m.results);
        this.store.setTotal(m.total);
        Object.assign(this.run, { done: m.done, ok: m.ok, failed: m.failed, total: m.total, elapsedMs: m.elapsedMs });
        break;
      case 'runFinished':
        if (!this.run || this.run.runId !== m.runId) break;
        Object.assign(this.run, { running: false, summary: m.summary, error: m.error, cancelled: m.cancelled, elapsedMs: m.summary.wallMs });
        if (m.reduce) {
          this.reduce = m.reduce;
          this.ui.tab = 'tree';
        }
        if ((m.error || m.cancelled) && this.comparingId === m.runId) this.endComparison();
        if (m.cancelled) this.say('Run cancelled; the answers that came back are kept.');
        else if (m.error) this.say(`Run failed: ${m.error}`, 'error');
        this.keepRun();
        break;
      case 'comparison': {
        // After every arm (the rounds so far), and once more when the comparison is saved: the view
        // grows; the tab comes forward once per run, and the chosen timeline round stays.
        this.comparison = m.comparison;
        const key = this.comparingId ?? this.run?.runId ?? null;
        if (key === null || this.comparisonShownFor !== key) {
          this.comparisonShownFor = key;
          this.ui.tab = 'compare';
        }
        this.keepRun();
        break;
      }
      case 'history':
        this.history = m.history;
        // The comparison is over once its record is saved (its final `comparison` follows).
        if (this.comparingId && m.history.some((h) => h.id === this.comparingId)) {
          this.endComparison();
          this.keepRun();
        }
        break;
      case 'showRun': {
        const r = m.record;
        if (r.id === this.dropShowOf) {
          this.dropShowOf = null;
          break;
        }
        // The run on show before a reload, as saved: it comes back on the tab the panel was on.
        const reopened = r.id === this.reopening;
        if (reopened) this.reopening = null;
        if (r.id === this.comparingId) this.endComparison();
        // A record keeps no error or cancel flag: its summary and rows say whether it was cancelled.
        const cancelledRows = m.results.reduce((n, x) => n + (x.status === 'cancelled' ? 1 : 0), 0);
        this.run = {
          runId: null,
          recordId: r.id,
          label: r.label,
          pattern: r.pattern,
          running: false,
          done: m.results.length,
          ok: r.summary.ok,
          failed: r.summary.failed,
          total: m.results.length,
          elapsedMs: r.summary.wallMs,
          summary: r.summary,
          error: r.error ?? null,
          cancelled: r.cancelled ?? ((r.summary.cancelled ?? 0) > 0 || cancelledRows > 0),
        };
        this.store.reset(m.results.length, m.results);
        this.reduce = m.reduce ?? null;
        this.comparison = m.comparison ?? this.comparison;
        // A comparison reopens on its figures and charts; any other run on its responses.
        if (!reopened) this.ui.tab = m.comparison ? 'compare' : m.reduce ? 'tree' : 'results';
        this.keepRun();
        break;
      }
    }
    this.invalidate();
  }

  /** The comparison is over (saved, cancelled or failed): its start notice goes with it. */
  private endComparison(): void {
    this.comparingId = null;
    if (this.notice && this.notice === this.compareNotice) {
      clearTimeout(this.noticeTimer);
      this.notice = null;
    }
    this.compareNotice = null;
  }

  private setEndpoints(connected: boolean, source: string | null, endpoints: EndpointInfo[]): void {
    this.connected = connected;
    this.source = source;
    this.endpoints = endpoints;
  }

  /**
   * After a reload (`init`), the run the saved state shows is asked for again by its id when history
   * has its record and the state has not all of it: a run too big to keep, or a snapshot taken before
   * the run was saved (between a comparison's arms, or whenever the workbench last flushed the
   * state). A saved record means the run is over: the snapshot never shows as running. A run that is
   * still going is not in history; the host resyncs it (runStarted…) right after `init`.
   */
  private reopenSaved(): void {
    const saved = this.ui.saved;
    if (!saved) return;
    const id = saved.view.recordId ?? saved.view.runId;
    if (!id || !this.history.some((h) => h.id === id)) return;
    saved.view.running = false;
    if (this.run) this.run.running = false;
    if (saved.rows && saved.view.recordId) return; // the finished run, whole
    this.reopening = id;
    void this.openRun(id);
  }

  /** Keeps the finished run in the state (rows only when small; else its record id for reopening). */
  private keepRun(): void {
    if (!this.run) return;
    const rows = this.store.all();
    if (!this.run.recordId && this.run.runId && this.history.some((h) => h.id === this.run!.runId)) this.run.recordId = this.run.runId;
    this.ui.saved = {
      view: this.run,
      total: this.store.length,
      rows: smallEnough(rows) ? rows : null,
      reduce: this.reduce,
      comparison: this.comparison,
    };
    this.persist();
  }

  // ---- actions ----------------------------------------------------------------------------

  /** A comparison is going (between its arms too). */
  get comparing(): boolean {
    return this.comparingId !== null;
  }

  get running(): boolean {
    return (this.run?.running ?? false) || this.comparingId !== null;
  }

  startRun(): void {
    const c = this.ui.compose;
    const request = buildRunRequest(c);
    post({ type: 'run', request });
    this.say(request.compare ? `Comparing batched and individual over ${request.compare.rounds} rounds…` : 'Starting the run…');
    this.compareNotice = request.compare ? this.notice : null;
  }

  cancelRun(): void {
    post({ type: 'cancel' });
  }

  /** Runs a host request; a failure becomes an error notice and resolves undefined. */
  async ask<M extends keyof Requests>(method: M, params: Requests[M]['params']): Promise<Requests[M]['result'] | undefined> {
    try {
      return await request(method, params);
    } catch (err) {
      this.say(`${method}: ${(err as Error).message}`, 'error');
      return undefined;
    }
  }

  copy(text: string): void {
    void this.ask('copy', { text }).then((r) => r !== undefined && this.say('Copied.'));
  }

  openInEditor(text: string, language?: string): void {
    void this.ask('openInEditor', language ? { text, language } : { text });
  }

  async importFile(): Promise<void> {
    const file = await this.ask('importFile', {});
    if (!file) return;
    const result = parsePromptFile(file.name, file.text);
    this.importDialog = { result, column: result.kind === 'table' ? result.suggested : '' };
    this.invalidate();
  }

  importRows(): import('../src/panel/protocol.ts').PromptRow[] {
    const d = this.importDialog;
    if (!d) return [];
    return d.result.kind === 'rows' ? d.result.rows : rowsFromTable(d.result.records, d.column).rows;
  }

  finishImport(append: boolean): void {
    const d = this.importDialog;
    if (!d) return;
    const rows = this.importRows();
    const prompts = append ? [...this.ui.compose.prompts, ...rows] : rows;
    this.importDialog = null;
    this.setCompose({ prompts, pattern: 'scatter' });
    this.selectedPrompt = prompts.length ? (append ? prompts.length - rows.length : 0) : -1;
    this.say(`Imported ${rows.length.toLocaleString('en-US')} prompts from ${d.result.name}.`);
  }

  async savePromptSet(): Promise<void> {
    const path = await this.ask('savePromptSet', { prompts: this.ui.compose.prompts });
    if (path) this.say(`Saved ${this.ui.compose.prompts.length} prompts to ${path}.`);
  }

  async openRun(id: string): Promise<void> {
    await this.ask('openRun', { id });
  }

  rerun(id: string): void {
    post({ type: 'rerun', id });
  }

  async exportRun(id: string, format: 'jsonl' | 'csv'): Promise<void> {
    const path = await this.ask('exportRun', { id, format });
    if (path) this.say(`Exported to ${path}.`);
  }

  async compareRuns(): Promise<void> {
    const started = (id: string) => this.history.find((h) => h.id === id)?.startedAt ?? '';
    const [a, b] = [...this.ui.picked].sort((x, y) => started(x).localeCompare(started(y)));
    if (!a || !b) return;
    const result = await this.ask('compareRuns', { a, b });
    if (result) {
      this.runsComparison = result;
      this.invalidate();
    }
  }

  togglePick(id: string, on: boolean): void {
    const picked = this.ui.picked.filter((x) => x !== id);
    if (on) picked.push(id);
    this.ui.picked = picked.slice(-2);
    this.persist();
    this.invalidate();
  }

  tabIndex(tab: Tab): number {
    return TABS.indexOf(tab);
  }

  get batchAllowed(): boolean {
    return canBatch(this.ui.compose.pattern);
  }
}

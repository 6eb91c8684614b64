/**
 * The panel: its view state (view-state.ts reduces every message into it), the host's messages,
 * and one render per animation frame (however fast runProgress arrives). Views are Lit templates
 * (text bindings only); the big tables and the charts are custom elements that draw themselves.
 */
import { render } from 'lit';
import type { Arm, OpenedRun, PromptRow, Requests } from '../src/panel/protocol.ts';
import { parseRows } from '../src/panel/result-rows.ts';
import { isHostMessage, loadState, post, request, saveState, settleReply } from './api.ts';
import { readTheme, type Theme } from './charts/specs.ts';
import { buildRunRequest, canBatch, type ComposeState } from './lib/compose.ts';
import { parsePromptFile, rowsFromTable } from './lib/import.ts';
import type { ResultFilter } from './lib/results.ts';
import { pairArms } from './lib/arm-pairs.ts';
import type { PanelApp } from './panel-app.ts';
import { restoreState, SAVE_ROWS_MAX, smallEnough, type Tab, type UiState } from './state.ts';
import { initialState, reduce, reopenId, type Action, type Notice, type ViewState } from './view-state.ts';
import { appView } from './views/app-view.ts';
import { Inbox, type Inbound } from './lib/inbox.ts';
import { int } from './lib/format.ts';

/** An info notice goes by itself after this long; an error stays until dismissed. */
const NOTICE_MS = 6000;

export class App implements PanelApp {
  state: ViewState;
  theme: Theme;
  private frame = 0;
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private noticeTimer: ReturnType<typeof setTimeout> | undefined;
  /** Every row of the run on show being fetched whole (wholeRows(null)). */
  private allRows: Promise<void> | undefined;
  /** The run asked for again after a reload (asked once, not at each History message). */
  private reopening: string | undefined;

  constructor(private readonly root: HTMLElement) {
    this.state = initialState(restoreState(loadState()));
    this.theme = readTheme();
  }

  start(): void {
    const inbox = new Inbox((message) => this.receive(message), {
      badRows: (count, why) => this.say(`${int(count)} result row${count === 1 ? '' : 's'} from the extension could not be read and ${count === 1 ? 'is' : 'are'} not shown: ${why}`, 'error'),
    });
    window.addEventListener('message', (e: MessageEvent) => {
      if (isHostMessage(e.data)) inbox.take(e.data);
    });
    new MutationObserver(() => {
      this.theme = readTheme();
      this.invalidate();
    }).observe(document.body, { attributes: true, attributeFilter: ['class'] });
    window.addEventListener('pagehide', () => this.saveNow());
    this.renderNow();
    post({ type: 'ready' });
  }

  /** A host message, its rows read (see Inbox), in the order the host sent it. */
  private receive(message: Inbound): void {
    if (message.type === 'reply') return void settleReply(message);
    this.dispatch(message);
    if (message.type === 'runProgress' && message.seq !== undefined) this.seen(message.runId, message.seq);
    // The run on show before a reload, asked for again once History lists it (a login-node run: once the window connects through its login again).
    if (message.type === 'init' || message.type === 'history') {
      const id = reopenId(this.state);
      if (id && id !== this.reopening) {
        this.reopening = id;
        void this.ask('openRun', { id }).then((run) => run && this.dispatch({ type: 'opened', run, ifShowing: id }), () => (this.reopening = undefined));
      }
    }
  }

  /** Every change of state goes through here: reduce, then keep, then render. */
  dispatch(action: Action): void {
    const before = this.state;
    this.state = reduce(before, action);
    if (this.state === before) return;
    if (this.state.notice !== before.notice) this.timeNotice(this.state.notice);
    // Only what is kept is saved (the UI and the run on show, not its progress: a run going is
    // resynced by the host after a reload). Saving the whole UI state (a palette run's 10,000 prompts
    // adopted into Compose) on every progress or endpoint message cost the workbench's thread, which
    // the panel shares, seconds over a long run.
    if (action.type !== 'runProgress' && (this.state.ui !== before.ui || this.state.run !== before.run || this.state.reduce !== before.reduce || this.state.comparison !== before.comparison)) this.persist();
    this.invalidate();
  }

  /** Renders at most once per animation frame. */
  invalidate(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderNow();
    });
  }

  /**
   * Tells the host progress message `seq` is drawn, so it sends the next (one at a time: see
   * runProgress in the protocol). Said in the frame that draws it, after the render (a frame's
   * callbacks run in the order asked, and dispatch asked for the render first); at once when
   * nothing is to draw (a message about a run not on show).
   */
  private seen(runId: string, seq: number): void {
    const say = () => post({ type: 'progressSeen', runId, seq });
    if (this.frame) requestAnimationFrame(say);
    else say();
  }

  renderNow(): void {
    render(appView(this), this.root);
  }

  get running(): boolean {
    return this.state.run?.running ?? false;
  }

  get batchAllowed(): boolean {
    return canBatch(this.state.ui.compose.pattern);
  }

  // ---- state kept across reloads ------------------------------------------------------------

  /** Saves the UI state soon (typing does not write it on every key). */
  private persist(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.saveNow(), 300);
  }

  /** The UI state with the run on show (its rows only when small; a reopen fetches the rest). */
  private saveNow(): void {
    clearTimeout(this.saveTimer);
    const s = this.state;
    // A run going is resynced by the host after a reload: its rows are not worth a copy on every save.
    const rows = s.run?.running || s.run?.detachedGoing || s.stale || s.store.received > SAVE_ROWS_MAX ? null : s.store.all();
    const ui: UiState = { ...s.ui, saved: s.run ? { view: s.run, total: s.store.length, rows: rows && smallEnough(rows) ? rows : null, reduce: s.reduce, comparison: s.comparison } : null };
    saveState(ui);
  }

  private timeNotice(notice: Notice | null): void {
    clearTimeout(this.noticeTimer);
    if (notice?.kind === 'info') this.noticeTimer = setTimeout(() => this.state.notice === notice && this.dispatch({ type: 'notice', notice: null }), NOTICE_MS);
  }

  // ---- actions ----------------------------------------------------------------------------

  setTab(tab: Tab): void {
    this.dispatch({ type: 'tab', tab });
  }

  setCompose(patch: Partial<ComposeState>): void {
    this.dispatch({ type: 'compose', patch });
  }

  setFilter(patch: Partial<ResultFilter>): void {
    this.dispatch({ type: 'filter', patch });
    // A search reads whole answers: live rows came cut (it matches their first characters until then).
    if (this.state.ui.filter.search) void this.wholeRows(null);
  }

  say(text: string, kind: Notice['kind'] = 'info'): void {
    this.dispatch({ type: 'notice', notice: { text, kind } });
  }

  /** Asks the host to run the composition; the run's messages follow its reply, a refusal says why. */
  startRun(): void {
    void request('run', { request: buildRunRequest(this.state.ui.compose) }).catch((err: Error) => this.dispatch({ type: 'refused', error: err.message }));
  }

  async startDetachedRun(): Promise<void> {
    const started = await this.ask('runDetached', { request: buildRunRequest(this.state.ui.compose) });
    if (!started) return;
    this.say('Running on the cluster: it goes on when the editor closes; History shows its rows as they land.');
    this.setTab('history');
  }

  cancelRun(): void {
    post({ type: 'cancel' });
  }

  drainRun(): void {
    post({ type: 'drain' });
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

  async wholeRows(indices: number[] | null): Promise<void> {
    const runId = this.state.run?.id;
    const store = this.state.store;
    if (!runId || !store.cut || (indices && !indices.some((i) => store.rows[i]?.cut))) return;
    // One fetch of every row at a time: typing a search asks again only once the last came.
    if (!indices && this.allRows) return this.allRows;
    const fetched = this.ask('fullRows', { runId, indices }).then((jsonl) => {
      // Only into the rows they were asked for: a comparison's next arm has a store of its own under the
      // same run. (The host answers with the arm it follows; its armStarted for a later arm came before
      // this reply, and the inbox hands messages on in order, so that store is already in place.)
      if (jsonl !== undefined && this.state.store === store) this.dispatch({ type: 'wholeRows', runId, rows: parseRows(jsonl) });
    });
    if (!indices) this.allRows = fetched.finally(() => (this.allRows = undefined));
    return fetched;
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
    this.dispatch({ type: 'importDialog', dialog: { result, column: result.kind === 'table' ? result.suggested : '' } });
  }

  importRows(): PromptRow[] {
    const d = this.state.importDialog;
    if (!d) return [];
    return d.result.kind === 'rows' ? d.result.rows : rowsFromTable(d.result.records, d.column).rows;
  }

  finishImport(append: boolean): void {
    const d = this.state.importDialog;
    if (!d) return;
    const rows = this.importRows();
    const prompts = append ? [...this.state.ui.compose.prompts, ...rows] : rows;
    this.dispatch({ type: 'importDialog', dialog: null });
    this.setCompose({ prompts, pattern: 'scatter' });
    this.dispatch({ type: 'selectPrompt', index: prompts.length ? (append ? prompts.length - rows.length : 0) : -1 });
    this.say(`Imported ${rows.length.toLocaleString('en-US')} prompts from ${d.result.name}.`);
  }

  async savePromptSet(): Promise<void> {
    const path = await this.ask('savePromptSet', { prompts: this.state.ui.compose.prompts });
    if (path) this.say(`Saved ${this.state.ui.compose.prompts.length} prompts to ${path}.`);
  }

  async openRun(id: string): Promise<void> {
    const run = await this.ask('openRun', { id });
    if (run) this.dispatch({ type: 'opened', run });
  }

  async showArm(arm: Arm): Promise<void> {
    const id = this.state.run?.id;
    if (!id) return;
    const run = await this.ask('openRun', { id, arm });
    if (run) this.dispatch({ type: 'opened', run, ifShowing: id });
  }

  async showBothArms(): Promise<void> {
    const id = this.state.run?.id;
    if (!id) return;
    const [b, i] = await Promise.all([this.ask('openRun', { id, arm: 'batched' }), this.ask('openRun', { id, arm: 'individual' })]);
    if (!b || !i) return;
    const side = (o: OpenedRun) => ({ arm: o.arm ?? null, rows: parseRows(o.resultsJsonl) });
    this.dispatch({ type: 'sideBySide', value: pairArms(id, side(b), side(i)) });
  }

  rerun(id: string): void {
    void request('rerun', { id }).catch((err: Error) => this.dispatch({ type: 'refused', error: err.message }));
  }

  continueRun(id: string, only: 'failed' | 'remaining'): void {
    void request('continueRun', { id, only }).catch((err: Error) => this.dispatch({ type: 'refused', error: err.message }));
  }

  async exportRun(id: string, format: 'jsonl' | 'csv'): Promise<void> {
    const path = await this.ask('exportRun', { id, format });
    if (path) this.say(`Exported to ${path}.`);
  }

  async compareRuns(): Promise<void> {
    const started = (id: string) => this.state.history.find((h) => h.id === id)?.startedAt ?? '';
    const [a, b] = [...this.state.ui.picked].sort((x, y) => started(x).localeCompare(started(y)));
    if (!a || !b) return;
    const result = await this.ask('compareRuns', { a, b });
    if (result) this.dispatch({ type: 'runsComparison', value: result });
  }
}

/** The panel's frame: the run bar on top (status, Run / Cancel, live progress), then the tabs. */
import { html, nothing } from 'lit';
import type { App } from '../app.ts';
import { int, ms, rate } from '../lib/format.ts';
import { summarize } from '../lib/compose.ts';
import { TABS, type RunView, type Tab } from '../state.ts';
import { composeView } from './compose.ts';
import { resultsView } from './results.ts';
import { treeView } from './tree.ts';
import { compareView } from './compare.ts';
import { historyView } from './history.ts';

const TAB_LABEL: Record<Tab, string> = { compose: 'Compose', results: 'Results', tree: 'Reduce tree', compare: 'Comparison', history: 'History' };

function connection(app: App) {
  if (!app.initialized) return html`<span class="conn" data-state="waiting">Waiting for the extension…</span>`;
  if (!app.connected) return html`<span class="conn" data-state="off"><vscode-icon name="debug-disconnect"></vscode-icon> Not connected — run <b>Swarm: Connect to Hostfile</b> or <b>Start Local Simulator</b></span>`;
  const healthy = app.endpoints.filter((e) => e.status === 'healthy' || e.status === 'ok').length;
  return html`<span class="conn" data-state="on" title=${app.source ?? ''}
    ><vscode-icon name="plug"></vscode-icon> ${app.endpoints.length} endpoint${app.endpoints.length === 1 ? '' : 's'}${healthy && healthy !== app.endpoints.length ? ` (${healthy} healthy)` : ''}${app.source ? html` · <span class="muted">${app.source}</span>` : nothing}</span
  >`;
}

/** How the run on show ended: a cancelled run says so (the core also sets its error to 'cancelled'). */
export function runState(r: RunView): 'running' | 'cancelled' | 'failed' | 'done' {
  return r.running ? 'running' : r.cancelled ? 'cancelled' : r.error ? 'failed' : 'done';
}

function progress(app: App) {
  const r = app.run;
  if (!r) return html`<span class="muted" id="run-status">No run yet.</span>`;
  const pct = r.total ? Math.min(100, (100 * r.done) / r.total) : 0;
  // runStarted.round counts from 0, as the core's rounds do.
  const arm = r.arm ? ` · ${r.arm}${r.round !== undefined ? `, round ${r.round + 1}` : ''}` : '';
  const speed = r.elapsedMs > 0 ? rate((1000 * r.ok) / r.elapsedMs, 'prompts/s') : '';
  // Between a comparison's arms the arm on show has finished, the comparison has not.
  const state = app.comparing ? 'running' : runState(r);
  // Prompts settled without an answer: the run counts them as done, neither ok nor failed.
  const cancelled = Math.max(r.summary?.cancelled ?? 0, r.done - r.ok - r.failed, 0);
  const said = state === 'failed' && r.error ? `failed: ${r.error}` : state;
  return html`<div class="progress" id="run-status" data-state=${state} role="status" aria-live="polite">
    <div class="progress-line">
      <span class="run-label" title=${r.label}>${r.label}${arm}</span>
      <span class="counts"
        ><span id="progress-done">${int(r.done)}</span> / ${int(r.total)} · <span class="ok">${int(r.ok)} ok</span>${r.failed
          ? html` · <span class="failed">${int(r.failed)} failed</span>`
          : nothing}${cancelled ? html` · <span class="cancelled">${int(cancelled)} cancelled</span>` : nothing} · ${ms(r.elapsedMs)}${speed ? ` · ${speed}` : ''} ·
        <span class="run-state" title=${r.error ?? ''}>${said}</span></span
      >
    </div>
    <vscode-progress-bar aria-label="Run progress" .value=${pct} max="100" ?indeterminate=${r.running && !r.total}></vscode-progress-bar>
  </div>`;
}

export function appView(app: App) {
  const s = summarize(app.ui.compose, app.endpoints);
  const canRun = app.initialized && app.connected && !app.running && s.problem === null;
  const why = !app.initialized ? 'Waiting for the extension' : !app.connected ? 'Connect a hostfile or start the simulator first' : app.running ? 'A run is going' : s.problem ?? '';
  return html`
    <header class="topbar">
      <div class="title"><vscode-icon name="organization"></vscode-icon><span>Swarm Lab</span>${connection(app)}</div>
      <div class="runbar">
        <vscode-button id="run" icon="play" ?disabled=${!canRun} title=${why || 'Run the composition'} @click=${() => canRun && app.startRun()}
          >${app.ui.compose.compare && app.batchAllowed ? 'Run both & compare' : 'Run'}</vscode-button
        >
        <vscode-button id="cancel" icon="debug-stop" secondary ?disabled=${!app.running} @click=${() => app.cancelRun()}>Cancel</vscode-button>
        ${progress(app)}
      </div>
      ${app.notice
        ? html`<div class="notice" data-kind=${app.notice.kind} role=${app.notice.kind === 'error' ? 'alert' : 'status'}>
            <span>${app.notice.text}</span>
            <vscode-icon name="close" action-icon label="Dismiss" @click=${() => ((app.notice = null), app.invalidate())}></vscode-icon>
          </div>`
        : nothing}
    </header>
    <vscode-tabs
      class="tabs"
      .selectedIndex=${app.tabIndex(app.ui.tab)}
      @vsc-tabs-select=${(e: CustomEvent<{ selectedIndex: number }>) => app.setTab(TABS[e.detail.selectedIndex] ?? 'compose')}
    >
      ${TABS.map(
        (t) => html`<vscode-tab-header slot="header" data-tab=${t}
          >${TAB_LABEL[t]}${t === 'results' && app.store.received ? html` <vscode-badge variant="counter">${int(app.store.received)}</vscode-badge>` : nothing}${t ===
            'history' && app.history.length
            ? html` <vscode-badge variant="counter">${app.history.length}</vscode-badge>`
            : nothing}</vscode-tab-header
        >`,
      )}
      <vscode-tab-panel data-panel="compose">${composeView(app, s)}</vscode-tab-panel>
      <vscode-tab-panel data-panel="results">${resultsView(app)}</vscode-tab-panel>
      <vscode-tab-panel data-panel="tree">${treeView(app)}</vscode-tab-panel>
      <vscode-tab-panel data-panel="compare">${compareView(app)}</vscode-tab-panel>
      <vscode-tab-panel data-panel="history">${historyView(app)}</vscode-tab-panel>
    </vscode-tabs>
  `;
}

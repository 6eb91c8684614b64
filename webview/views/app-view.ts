/** The panel's frame: the run bar on top (status, Run / Cancel, live progress), then the tabs. */
import { html, nothing } from 'lit';
import type { PanelApp as App } from '../panel-app.ts';
import { int, ms, rate } from '../lib/format.ts';
import { summarize, type ComposeState, type ComposeSummary } from '../lib/compose.ts';
import type { EndpointInfo } from '../../src/panel/protocol.ts';
import { ARMS, armLosses, lossText } from '../lib/stats.ts';
import { TABS, type RunView, type Tab } from '../state.ts';
import { composeView } from './compose.ts';
import { healthWarning, swarmHealth, type SwarmHealth } from '../lib/swarm-health.ts';
import { resultsView } from './results.ts';
import { STEPS_TAB, treeView } from './tree.ts';
import { compareView } from './compare.ts';
import { historyView } from './history.ts';
import { tabView } from './tab-views.ts';

const TAB_LABEL: Record<Tab, string> = { compose: 'Compose', results: 'Results', tree: 'Steps', compare: 'Comparison', history: 'History' };
/** Names that fit a 400 px panel's tab strip (CSS picks one by width). */
const SHORT: Readonly<Record<string, string>> = { Comparison: 'Compare', 'Reduce tree': 'Tree' };

/** The steps tab is named for the pattern on show (a pipeline's is "Pipeline"), else "Steps". */
function tabLabel(t: Tab, app: App) {
  const long = t === 'tree' && app.state.reduce && app.state.run ? STEPS_TAB[app.state.run.pattern] : TAB_LABEL[t];
  const short = SHORT[long];
  return short ? html`<span class="tab-long">${long}</span><span class="tab-short" title=${long}>${short}</span>` : long;
}

function connection(app: App) {
  if (!app.state.initialized) return html`<span class="conn" data-state="waiting">Waiting for the extension…</span>`;
  if (!app.state.connected)
    return html`<span class="conn" data-state="off"
      ><vscode-icon name="debug-disconnect"></vscode-icon> Not connected —
      <button type="button" class="link" id="connect-hostfile" @click=${() => void app.ask('connect', { simulator: false })}>Connect to Hostfile</button> or
      <button type="button" class="link" id="connect-simulator" @click=${() => void app.ask('connect', { simulator: true })}>Start Local Simulator</button></span
    >`;
  const all = app.state.endpoints.length;
  const { down } = composition(app).allHealth;
  const healthy = app.state.endpoints.filter((e) => e.status === 'up').length;
  const health = down.length === all && all ? 'down' : down.length ? 'partial' : 'ok';
  return html`<span class="conn" data-state="on" data-health=${health} title=${app.state.source ?? ''}
    ><vscode-icon name=${health === 'ok' ? 'plug' : 'warning'}></vscode-icon> ${all} endpoint${all === 1 ? '' : 's'}${healthy !== all || down.length
      ? html` · <span class=${down.length ? 'warning' : ''} id="conn-health">${healthy} healthy${down.length ? `, ${down.length} down` : ''}</span>`
      : nothing}${app.state.source ? html` · <span class="muted">${app.state.source}</span>` : nothing}</span
  >`;
}

/** How the run on show ended: a cancelled run says so (the core also sets its error to 'cancelled'), and a drained one. */
export function runState(r: RunView): 'running' | 'cancelled' | 'drained' | 'failed' | 'done' {
  return r.running || r.detachedGoing ? 'running' : r.drained ? 'drained' : r.cancelled ? 'cancelled' : r.error ? 'failed' : 'done';
}

/** A finished comparison in the run bar: each arm's losses over its rounds, not one round's counts. */
function comparisonCounts(app: App) {
  const c = app.state.comparison;
  if (!c || c.runId !== app.state.run?.id) return null;
  return html`${int(app.state.run.rounds)} round${app.state.run.rounds === 1 ? '' : 's'} per arm${ARMS.map((a) => {
    const text = lossText(armLosses(c.view, a));
    return html` · ${a}: ${text ? html`<span class="failed">${text}</span>` : html`<span class="ok">all answered</span>`}`;
  })}`;
}

/**
 * While an unstreamed batch runs, no prompt is done until its list ends: the servers' own `/metrics`
 * (summed over the run's endpoints) say how far they are. Counts on those servers, by anyone.
 */
function serversLine(r: RunView) {
  const s = r.servers;
  if (!r.running || !s) return nothing;
  const read = s.endpoints > s.asked ? `a sample of ${int(s.asked)} of the ${int(s.endpoints)} endpoints, the same each reading, ${int(s.answered)} answered the last; its sums scaled to all ${int(s.endpoints)}` : `${int(s.answered)} of ${int(s.asked)} endpoints answered the last reading`;
  const title = `From the servers' /metrics (${read}): sequences in model execution batches (vllm:num_requests_running) and queued (vllm:num_requests_waiting) now; sequences finished (vllm:request_success_total) and tokens generated (vllm:generation_tokens_total) since their first reading (a couple of seconds into the run), on these servers, by any client. A batch's answers come back only when its list ends.`;
  return html`<div class="servers-line muted" id="run-servers" title=${title}>
    servers: <span data-k="running">${int(s.running)}</span> running · <span data-k="waiting">${int(s.waiting)}</span> waiting ·
    <span data-k="finished">${int(s.finished)}</span> finished · <span data-k="tokens">${int(s.generationTokens)}</span> tokens${s.answered < s.asked
      ? html` · <span class="warning">${int(s.asked - s.answered)} not answering</span>`
      : nothing}
  </div>`;
}

function progress(app: App) {
  const r = app.state.run;
  if (!r) return html`<span class="muted" id="run-status">No run yet.</span>`;
  // Nothing answered yet in an unstreamed batch: the bar follows the sequences its servers finished.
  const moved = r.running && r.servers ? Math.max(r.done, Math.min(r.total, r.servers.finished)) : r.done;
  const pct = r.total ? Math.min(100, (100 * moved) / r.total) : 0;
  // armStarted.round counts from 0, as the core's rounds do.
  const arm = r.running && r.arm ? ` · ${r.arm}, round ${(r.round ?? 0) + 1}/${r.rounds}` : '';
  // Finished, the run's figures are its summary's: the run bar, the Results figures and History say one value.
  const speed = r.summary ? rate(r.summary.promptThroughput, 'prompts/s') : r.elapsedMs > 0 ? rate((1000 * r.ok) / r.elapsedMs, 'prompts/s') : '';
  const state = runState(r);
  // Prompts settled without an answer: the run counts them as done, neither ok nor failed.
  const cancelled = Math.max(r.summary?.cancelled ?? 0, r.done - r.ok - r.failed, 0);
  const said = state === 'failed' && r.error ? `failed: ${r.error}` : state;
  const compared = r.kind === 'comparison' && !r.running ? comparisonCounts(app) : null;
  return html`<div class="progress" id="run-status" data-state=${state} data-run=${r.id} role="status" aria-live="polite">
    <div class="progress-line">
      <span class="run-label" title=${r.label}>${r.label}${arm}</span>
      <span class="counts"
        >${compared ??
        html`<span id="progress-done">${int(r.done)}</span> / <span id="progress-total">${int(r.total)}</span> · <span class="ok">${int(r.ok)} ok</span>${r.failed
            ? html` · <span class="failed">${int(r.failed)} failed</span>`
            : nothing}${cancelled ? html` · <span class="cancelled">${int(cancelled)} cancelled</span>` : nothing}`} · ${ms(r.elapsedMs)}${speed && !compared ? ` · ${speed}` : ''} ·
        <span class="run-state" title=${r.error ?? ''}>${said}</span></span
      >
    </div>
    ${serversLine(r)}
    <vscode-progress-bar aria-label=${moved > r.done ? 'Run progress (sequences the servers finished)' : 'Run progress'} .value=${pct} max="100" ?indeterminate=${r.running && !r.total}></vscode-progress-bar>
  </div>`;
}

/**
 * The composition's figures and the swarm's health, made again only when the composition or the
 * endpoints change: the run bar draws every frame of a run, and these go over every prompt and
 * endpoint (10,000 and 1,000).
 */
let composed: { compose: ComposeState; endpoints: readonly EndpointInfo[]; summary: ComposeSummary; warning: string | null; allHealth: SwarmHealth } | null = null;
function composition(app: App) {
  const { compose } = app.state.ui;
  const { endpoints } = app.state;
  if (composed?.compose !== compose || composed.endpoints !== endpoints)
    composed = { compose, endpoints, summary: summarize(compose, endpoints), warning: healthWarning(swarmHealth(endpoints, compose.tags)), allHealth: swarmHealth(endpoints, []) };
  return composed;
}

export function appView(app: App) {
  const { summary: s, warning: health } = composition(app);
  const canRun = app.state.initialized && app.state.connected && !app.running && s.problem === null;
  const why = !app.state.initialized ? 'Waiting for the extension' : !app.state.connected ? 'Connect a hostfile or start the simulator first' : app.running ? 'A run is going' : s.problem ?? '';
  const warning = canRun ? health : null;
  const label = app.state.ui.compose.compare && app.batchAllowed ? 'Run both & compare' : 'Run';
  return html`
    <header class="topbar">
      <div class="title"><vscode-icon name="organization"></vscode-icon><span>Swarm Lab</span>${connection(app)}</div>
      <div class="runbar">
        <vscode-button id="run" icon="play" ?disabled=${!canRun} title=${why || warning || 'Run the composition'} @click=${() => canRun && app.startRun()}
          >${warning ? `${label} anyway` : label}</vscode-button
        >
        <vscode-button
          id="run-detached"
          icon="cloud-upload"
          secondary
          ?disabled=${!canRun || app.state.ui.compose.pattern !== 'scatter' || app.state.ui.compose.compare}
          title="Run on the cluster: started detached where the swarm is (the login node, through the one SSH login), it outlives the editor; History shows it as it goes"
          @click=${() => void app.startDetachedRun()}
          >Run on the cluster</vscode-button
        >
        <vscode-button id="cancel" icon="debug-stop" secondary ?disabled=${!app.running} @click=${() => app.cancelRun()}>Cancel</vscode-button>
        <vscode-button id="drain" icon="debug-pause" secondary ?disabled=${!app.running} title="Finish what is in flight and send nothing new; the rest is kept for a resume" @click=${() => app.drainRun()}>Drain</vscode-button>
        ${progress(app)}
      </div>
      ${warning ? html`<div class="health-warning" id="health-warning" role="status"><vscode-icon name="warning"></vscode-icon><span>${warning}</span></div>` : nothing}
      ${app.state.notice
        ? html`<div class="notice" data-kind=${app.state.notice.kind} role=${app.state.notice.kind === 'error' ? 'alert' : 'status'}>
            <span>${app.state.notice.text}</span>
            <vscode-icon name="close" action-icon label="Dismiss" @click=${() => app.dispatch({ type: 'notice', notice: null })}></vscode-icon>
          </div>`
        : nothing}
    </header>
    <vscode-tabs
      class="tabs"
      .selectedIndex=${TABS.indexOf(app.state.ui.tab)}
      @vsc-tabs-select=${(e: CustomEvent<{ selectedIndex: number }>) => app.setTab(TABS[e.detail.selectedIndex] ?? 'compose')}
    >
      ${TABS.map(
        (t) => html`<vscode-tab-header slot="header" data-tab=${t}
          >${tabLabel(t, app)}${t === 'results' && app.state.store.received ? html` <vscode-badge variant="counter">${int(app.state.store.received)}</vscode-badge>` : nothing}${t ===
            'history' && app.state.history.length
            ? html` <vscode-badge variant="counter">${app.state.history.length}</vscode-badge>`
            : nothing}</vscode-tab-header
        >`,
      )}
      <vscode-tab-panel data-panel="compose">${tabView(app, 'compose', () => composeView(app, s))}</vscode-tab-panel>
      <vscode-tab-panel data-panel="results">${tabView(app, 'results', () => resultsView(app))}</vscode-tab-panel>
      <vscode-tab-panel data-panel="tree">${tabView(app, 'tree', () => treeView(app))}</vscode-tab-panel>
      <vscode-tab-panel data-panel="compare">${tabView(app, 'compare', () => compareView(app))}</vscode-tab-panel>
      <vscode-tab-panel data-panel="history">${tabView(app, 'history', () => historyView(app))}</vscode-tab-panel>
    </vscode-tabs>
  `;
}

/** Results: the filters, the run's figures, and the virtualized table of responses in input order. */
import { html, nothing } from 'lit';
import { ref } from 'lit/directives/ref.js';
import type { PanelApp as App } from '../panel-app.ts';
import { int, ms, rate } from '../lib/format.ts';
import { continuable } from '../lib/continue.ts';
import { LATENCY_STATS, latencyMetrics, metricHelp, noneBecause, requestsByPathText } from '../lib/latency.ts';
import { continueButtons } from './continue-buttons.ts';
import type { SentContext } from '../lib/request-sent.ts';
import { isFiltered, type FilterMode } from '../lib/results.ts';
import type { SideBySide } from '../lib/arm-pairs.ts';
import type { ResultsTableActions } from '../table/results-table.ts';

type Field = HTMLElement & { value: string };
type Check = HTMLElement & { checked: boolean };

let actionsFor: App | null = null;
let actions: ResultsTableActions | null = null;
function tableActions(app: App): ResultsTableActions {
  if (actionsFor !== app || !actions) {
    actionsFor = app;
    actions = {
      copy: (text) => app.copy(text),
      open: (text, language) => app.openInEditor(text, language),
      whole: (indices) => app.wholeRows(indices),
      sort: (key) => {
        const f = app.state.ui.filter;
        // Again on the same column: the other way; a third time: back to input order.
        app.setFilter(key && key === f.sort ? (f.desc ? { sort: '', desc: false } : { desc: true }) : { sort: key, desc: false });
      },
    };
  }
  return actions;
}

function figures(app: App) {
  const s = app.state.run?.summary;
  if (!s) return nothing;
  const byPath = requestsByPathText(s.requestsByPath);
  const cells: Array<[string, string, string]> = [
    ['wall time', ms(s.wallMs), ''],
    ['prompts', `${int(s.ok)} ok · ${int(s.failed)} failed${s.cancelled ? ` · ${int(s.cancelled)} cancelled` : ''}`, ''],
    ['HTTP requests', int(s.httpRequests), byPath],
    ['generation requests', int(s.generationRequests), ''],
    ['prompts/s', rate(s.promptThroughput, '/s'), ''],
    ['output tok/s', rate(s.outputTokenThroughput, '/s'), ''],
    ['mode', `${s.mode}${s.streamed ? ' · streamed' : ''}`, ''],
    ['model', s.model ?? '—', ''],
  ];
  return html`<dl class="figures" id="run-figures">
      ${cells.map(([k, v, more]) => html`<div data-figure=${k} title=${[metricHelp(k), more].filter(Boolean).join('\n\n')}><dt>${k}</dt><dd>${v}</dd></div>`)}
    </dl>
    <table class="latency-table" id="latency-table" aria-label="Latencies of the successful prompts">
      <thead>
        <tr><th scope="col"></th>${LATENCY_STATS.map(([stat]) => html`<th scope="col" class="num" title=${metricHelp(stat)}>${stat}</th>`)}</tr>
      </thead>
      <tbody>
        ${latencyMetrics(s).map(
          (m) => html`<tr data-metric=${m.label}>
            <th scope="row" title=${metricHelp(m.label)}>${m.label}</th>
            ${LATENCY_STATS.map(([, key]) => {
              const v = m.pick(s)?.[key];
              return html`<td class="num" title=${v === undefined || v === null || !Number.isFinite(v) ? noneBecause(m.label) : ''}>${ms(v)}</td>`;
            })}
          </tr>`,
        )}
      </tbody>
    </table>`;
}

/** Live, the run's parameters say it; finished, its summary. */
const streamed = (app: App) => Boolean(app.state.run?.summary?.streamed ?? app.state.run?.context?.params.stream);

/** How the rows on show were requested: a comparison's by the arm and round they are (its salt too). */
function sentContext(app: App): SentContext {
  const run = app.state.run;
  const c = app.state.comparison;
  const round = c && c.runId === run?.id ? c.view.rounds.find((r) => r.arm === run.arm && r.round === run.round) : undefined;
  return {
    batched: run?.kind === 'comparison' ? run.arm !== 'individual' : run?.summary ? run.summary.mode === 'batched' : (run?.context?.params.batch ?? false),
    streamed: streamed(app),
    model: run?.summary?.model ?? run?.context?.model ?? null,
    params: run?.context?.params ?? null,
    cacheSalt: round?.cacheSalt ?? null,
  };
}

/**
 * A comparison's table names the arm and round its rows are (live: the arm going); once saved, a
 * switch shows the other arm's kept round. The figures above are that round's.
 */
function armHeader(app: App) {
  const run = app.state.run;
  const c = app.state.comparison;
  if (run?.kind !== 'comparison' || !run.arm) return nothing;
  const kept = c?.runId === run.id ? c.view.kept : undefined;
  const median = !run.running && kept?.[run.arm] === run.round && c!.view.rounds.filter((r) => r.arm === run.arm).length > 1;
  const other = run.arm === 'batched' ? 'individual' : 'batched';
  const canSwitch = run.saved && !run.running && (kept ? kept[other] !== undefined : true);
  const both = app.state.sideBySide?.runId === run.id;
  const pick = (choice: ArmChoice) => {
    if (choice === 'both') return void app.showBothArms();
    app.dispatch({ type: 'sideBySide', value: null });
    if (choice !== run.arm) void app.showArm(choice);
  };
  return html`<div class="arm-header toolbar" id="arm-header" data-arm=${both ? 'both' : run.arm} data-round=${run.round ?? 0}>
    <h2 class="arm-title">${both
      ? html`Both arms, prompt by prompt: <b>batched</b> round ${roundText(app.state.sideBySide!.rounds.batched)}, <b>individual</b> round ${roundText(app.state.sideBySide!.rounds.individual)}`
      : html`Rows of the <b>${run.arm}</b> arm, round ${(run.round ?? 0) + 1} of ${int(run.rounds)}${median ? ' (its median round)' : ''}${run.running ? ' · live' : ''}`}</h2>
    ${canSwitch
      ? html`<fieldset class="radios" id="arm-switch">
          <legend>Arm</legend>
          ${ARM_CHOICES.map(
            ([choice, label]) =>
              html`<label><input type="radio" name="arm" value=${choice} .checked=${both ? choice === 'both' : run.arm === choice} @change=${() => pick(choice)} />${label}</label>`,
          )}
        </fieldset>`
      : nothing}
  </div>`;
}

type ArmChoice = 'batched' | 'individual' | 'both';
const ARM_CHOICES: ReadonlyArray<[ArmChoice, string]> = [
  ['batched', 'batched'],
  ['individual', 'individual'],
  ['both', 'side by side'],
];

const roundText = (a: { round: number } | null) => (a ? String(a.round + 1) : '—');

/** Only the prompts whose answers differ between the arms (the side-by-side view's checkbox). */
let onlyDiffering = false;

/** Both arms of a saved comparison prompt by prompt (promptfoo's providers side by side). */
function sideBySideView(app: App, side: SideBySide) {
  const pairs = onlyDiffering ? side.pairs.filter((p) => p.differ) : side.pairs;
  return html`<div class="toolbar" id="side-by-side-bar">
      <vscode-checkbox
        id="only-differing"
        .checked=${onlyDiffering}
        @change=${(e: Event) => {
          onlyDiffering = (e.currentTarget as Check).checked;
          app.invalidate();
        }}
        >Only prompts answered differently</vscode-checkbox
      >
      <span class="muted" id="side-by-side-count" role="status">${int(side.differing)} of ${int(side.pairs.length)} prompts answered differently${onlyDiffering ? ` · ${int(pairs.length)} shown` : ''}</span>
    </div>
    <swarm-arms-table id="arms-table" .tableData=${{ pairs, version: `${side.runId}:${onlyDiffering}:${pairs.length}` }}></swarm-arms-table>`;
}

/**
 * The datalist's options, made once the endpoint box is first focused (1,000 options made while a
 * run's first rows come in cost that frame; no one sees them until the box is used), then again only
 * when the run's set of endpoints changes; plain option elements (a template instance each cost the
 * focus ~40 ms at 1,000).
 */
let optionsWanted = false;
/** The endpoints each datalist holds now. */
const optionsOf = new WeakMap<Element, readonly string[]>();
function endpointOptions(app: App) {
  return ref((list) => {
    const endpoints = app.state.store.endpoints();
    if (!list || !optionsWanted || optionsOf.get(list) === endpoints) return;
    optionsOf.set(list, endpoints);
    list.replaceChildren(...endpoints.map((ep) => new Option('', ep)));
  });
}

export function resultsView(app: App) {
  const f = app.state.ui.filter;
  const { view, error } = app.state.store.filtered(f);
  const shown = view ? view.length : app.state.store.length;
  if (!app.state.run && !app.state.store.length) return html`<p class="empty" id="results-empty">No results yet: compose a run and press Run, or reopen one from History.</p>`;
  const run = app.state.run;
  const more = run && run.saved && !run.running ? continueButtons(app, run.id, continuable({ pattern: run.pattern, mode: run.kind === 'comparison' ? 'compare' : (run.summary?.mode ?? 'batched'), summary: run.summary })) : [];
  const side = app.state.sideBySide;
  if (side && run && side.runId === run.id) return html`<div class="results" id="results">${armHeader(app)} ${sideBySideView(app, side)}</div>`;
  return html`<div class="results" id="results">
    ${armHeader(app)} ${figures(app)}
    ${more.some((b) => b !== nothing) ? html`<div class="toolbar" id="continue-run">${more}</div>` : nothing}
    <div class="filters toolbar" role="search">
      <select id="filter-mode" class="native" aria-label="Show" .value=${f.mode} @change=${(e: Event) => app.setFilter({ mode: (e.currentTarget as Field).value as FilterMode })}>
        <option value="all" ?selected=${f.mode === 'all'}>All</option>
        <option value="failures" ?selected=${f.mode === 'failures'}>Failures</option>
        <option value="ok" ?selected=${f.mode === 'ok'}>Successes</option>
      </select>
      <vscode-textfield
        id="search"
        type="search"
        placeholder=${f.regex ? 'Regular expression over prompts, responses, errors' : 'Search prompts, responses, errors'}
        aria-label="Search"
        .value=${f.search}
        ?invalid=${!!error}
        @input=${(e: Event) => app.setFilter({ search: (e.currentTarget as Field).value })}
        ><vscode-icon slot="content-before" name="search"></vscode-icon
      ></vscode-textfield>
      <vscode-checkbox id="regex" .checked=${f.regex} @change=${(e: Event) => app.setFilter({ regex: (e.currentTarget as Check).checked })}>Regex</vscode-checkbox>
      <!-- A text box with the endpoints as native suggestions: 1,000 of them cost nothing until it opens, and typing narrows them. -->
      <input
        id="filter-endpoint"
        class="native"
        type="search"
        list="endpoint-options"
        aria-label="Endpoint (any part of host:port)"
        placeholder="All endpoints"
        title="Rows from endpoints whose host:port contains this"
        .value=${f.endpoint}
        @focus=${() => {
          if (optionsWanted) return;
          optionsWanted = true;
          app.renderNow();
        }}
        @input=${(e: Event) => app.setFilter({ endpoint: (e.currentTarget as Field).value.trim() })}
        @change=${(e: Event) => app.setFilter({ endpoint: (e.currentTarget as Field).value.trim() })}
      />
      <datalist id="endpoint-options" ${endpointOptions(app)}></datalist>
      <span class="muted" id="shown-count" role="status"
        >${isFiltered(f) ? `${int(shown)} of ${int(app.state.store.received)} shown` : `${int(app.state.store.statusCounts.ok)} of ${int(app.state.store.length)} answered`}${app.state.store.statusCounts.failed
          ? html` · <span class="failed" id="failed-count">${int(app.state.store.statusCounts.failed)} failed</span>`
          : nothing}${app.state.store.statusCounts.cancelled
          ? html` · <span class="cancelled" id="cancelled-count">${int(app.state.store.statusCounts.cancelled)} cancelled</span>`
          : nothing}</span
      >
      ${isFiltered(f)
        ? html`<vscode-button id="clear-filter" secondary icon="clear-all" @click=${() => app.setFilter({ mode: 'all', search: '', endpoint: '' })}>Clear filter</vscode-button>`
        : nothing}
    </div>
    ${error ? html`<p class="error" id="search-error" role="alert">Not a valid regular expression: ${error}</p>` : nothing}
    <swarm-results-table
      id="results-table"
      .actions=${tableActions(app)}
      .tableData=${{ store: app.state.store, view, run: app.state.run?.id ?? '', sort: f.sort, desc: f.desc, streamed: streamed(app), sent: sentContext(app), version: `${app.state.store.version}:${view ? 'v' : 'all'}:${shown}:${JSON.stringify(f)}` }}
    ></swarm-results-table>
  </div>`;
}

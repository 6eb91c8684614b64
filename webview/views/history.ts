/**
 * History: saved runs (reopen, rerun, export JSONL/CSV), and two of them compared: their figures
 * side by side and the prompts whose answers differ, word by word.
 */
import { diffWords } from 'diff';
import { html, nothing } from 'lit';
import type { HistoryEntry, RunRecord } from '../../src/panel/protocol.ts';
import type { PanelApp as App } from '../panel-app.ts';
import type { RunsComparison } from '../view-state.ts';
import { figure, int, when } from '../lib/format.ts';
import { continuable } from '../lib/continue.ts';
import { latencyFigures } from '../lib/latency.ts';
import { continueButtons } from './continue-buttons.ts';

type Check = HTMLElement & { checked: boolean };
type RunSummary = RunRecord['summary'];

const FIGURES: Array<{ label: string; unit: 'ms' | 'count' | 'rate'; pick: (s: RunSummary) => number | null | undefined }> = [
  { label: 'prompts', unit: 'count', pick: (s) => s.prompts },
  { label: 'ok', unit: 'count', pick: (s) => s.ok },
  { label: 'failed', unit: 'count', pick: (s) => s.failed },
  { label: 'wall time', unit: 'ms', pick: (s) => s.wallMs },
  { label: 'HTTP requests', unit: 'count', pick: (s) => s.httpRequests },
  { label: 'prompts/s', unit: 'rate', pick: (s) => s.promptThroughput },
  { label: 'output tokens/s', unit: 'rate', pick: (s) => s.outputTokenThroughput },
];

const SHOW_CHANGED = 100;
const DIFF_MAX_CHARS = 20_000;
let showAllChanged = false;

function delta(a: number | null | undefined, b: number | null | undefined): string {
  if (a === null || a === undefined || b === null || b === undefined || !a) return '';
  const pct = ((b - a) / a) * 100;
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(pct > -10 && pct < 10 ? 1 : 0)}%`;
}

function wordDiff(a: string, b: string) {
  if (a.length + b.length > DIFF_MAX_CHARS) {
    return html`<div class="diff-pair"><pre class="vl-text del-side">${a}</pre><pre class="vl-text ins-side">${b}</pre></div>`;
  }
  return html`<pre class="vl-text diff">${diffWords(a, b).map((p) => (p.added ? html`<ins>${p.value}</ins>` : p.removed ? html`<del>${p.value}</del>` : p.value))}</pre>`;
}

function runsComparison(app: App, rc: RunsComparison) {
  const changed = showAllChanged ? rc.changed : rc.changed.slice(0, SHOW_CHANGED);
  const label = (r: RunRecord) => `${r.label} · ${when(r.startedAt)}`;
  return html`<section class="runs-compare" id="runs-compare" aria-label="Two runs compared">
    <div class="toolbar">
      <h3>Compared</h3>
      <vscode-button
        secondary
        icon="close"
        @click=${() => app.dispatch({ type: 'runsComparison', value: null })}
        >Close</vscode-button
      >
    </div>
    <table class="figures-table" id="runs-figures">
      <thead>
        <tr>
          <th scope="col"></th>
          <th scope="col">A: ${label(rc.a)}</th>
          <th scope="col">B: ${label(rc.b)}</th>
          <th scope="col">B vs A</th>
        </tr>
      </thead>
      <tbody>
        <tr><th scope="row">pattern · mode</th><td>${rc.a.pattern} · ${rc.a.mode}</td><td>${rc.b.pattern} · ${rc.b.mode}</td><td></td></tr>
        <tr data-figure="ran on"><th scope="row">ran on</th><td>${contextText(rc.a) || '—'}</td><td>${contextText(rc.b) || '—'}</td><td class="muted">${contextText(rc.a) !== contextText(rc.b) ? 'differs' : ''}</td></tr>
        <tr data-figure="status"><th scope="row">status</th><td>${ended(rc.a)}</td><td>${ended(rc.b)}</td><td></td></tr>
        ${[...FIGURES, ...latencyFigures(rc.a.summary, rc.b.summary).map((f) => ({ ...f, unit: 'ms' as const }))].map((f) => {
          const a = f.pick(rc.a.summary);
          const b = f.pick(rc.b.summary);
          return html`<tr data-figure=${f.label}>
            <th scope="row">${f.label}</th>
            <td class="num">${figure(a, f.unit)}</td>
            <td class="num">${figure(b, f.unit)}</td>
            <td class="num muted">${delta(a, b)}</td>
          </tr>`;
        })}
      </tbody>
    </table>
    <h3 id="changed-count">${rc.changed.length ? `${int(rc.changed.length)} prompt${rc.changed.length === 1 ? '' : 's'} answered differently` : 'Every answer given in both runs is the same.'}</h3>
    ${rc.unanswered
      ? html`<p class="muted" id="unanswered-count">${int(rc.unanswered)} prompt${rc.unanswered === 1 ? ' was' : 's were'} not answered in both runs (cancelled or missing in one): not compared.</p>`
      : nothing}
    <ol class="changed">
      ${changed.map(
        (c) => html`<li class="change" data-index=${c.index}>
          <div class="change-head">prompt ${c.index + 1} <span class="muted"><del>A</del> → <ins>B</ins></span></div>
          ${wordDiff(c.a, c.b)}
        </li>`,
      )}
    </ol>
    ${!showAllChanged && rc.changed.length > SHOW_CHANGED
      ? html`<vscode-button
          secondary
          @click=${() => {
            showAllChanged = true;
            app.invalidate();
          }}
          >Show all ${int(rc.changed.length)}</vscode-button
        >`
      : nothing}
  </section>`;
}

/** How a run ended, in one word (records from before runs kept it say done); a detached run going, how it stands. */
function ended(r: HistoryEntry): string {
  if (r.detached && r.detached.state !== 'finished') return `detached · ${r.detached.state}`;
  return r.cancelled ? 'cancelled' : r.drained ? 'drained' : r.error ? 'failed' : 'done';
}

/** What a run ran on: hostfile, endpoints, model, server version, parameters (absent in older records). */
export function contextText(r: Pick<RunRecord, 'context'>): string {
  const c = r.context;
  if (!c) return '';
  const p = c.params;
  const params = [
    p.batch ? 'batched' : 'individual',
    p.stream ? 'streamed' : '',
    p.maxTokens ? `max_tokens ${p.maxTokens}` : '',
    p.temperature !== undefined ? `temperature ${p.temperature}` : '',
    p.topP !== undefined ? `top_p ${p.topP}` : '',
    p.seed !== undefined ? `seed ${p.seed}` : '',
    p.n !== undefined ? `n ${p.n}` : '',
    p.stop?.length ? `${p.stop.length} stop sequence${p.stop.length === 1 ? '' : 's'}` : '',
    p.system ? 'system prompt' : '',
    p.extra ? Object.keys(p.extra).join(' ') : '',
    p.tags.length ? p.tags.map(([k, v]) => `${k}=${v}`).join(' ') : '',
    p.fanin ? `fan-in ${p.fanin}` : '',
    p.route ? `route ${p.route}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  const server = c.serverVersion ? `vLLM ${c.serverVersion}` : '';
  const job = c.job ? `${c.job.scheduler} job ${c.job.id} on ${c.job.nodes.length > 3 ? `${c.job.nodes.length} nodes` : c.job.nodes.join(', ')} (${c.job.template.split('/').pop()})` : '';
  return [c.hostfile ?? '', job, `${int(c.endpoints)} endpoint${c.endpoints === 1 ? '' : 's'}`, c.model ?? '', server, params].filter(Boolean).join(' · ');
}

export function historyView(app: App) {
  const picked = app.state.ui.picked;
  const runs = app.state.history.slice(0, 500);
  return html`<div class="history" id="history">
    ${app.state.runsComparison ? runsComparison(app, app.state.runsComparison) : nothing}
    <div class="toolbar">
      <vscode-button id="compare-runs" icon="diff" ?disabled=${picked.length !== 2} @click=${() => void app.compareRuns()}
        >Compare the two picked runs</vscode-button
      >
      <span class="muted">${picked.length === 2 ? 'A is the older pick, B the newer.' : 'Pick two runs to compare.'}</span>
    </div>
    ${runs.length
      ? html`<table class="history-table" id="history-table">
          <thead>
            <tr>
              <th scope="col"><span class="sr-only">Pick</span></th>
              <th scope="col">run</th>
              <th scope="col">status</th>
              <th scope="col" class="num">ok / failed</th>
              <th scope="col" class="actions-head">actions</th>
              <th scope="col" class="num h-wide">wall</th>
              <th scope="col" class="num h-wide">prompts/s</th>
            </tr>
          </thead>
          <tbody>
            ${runs.map(
              (r) => html`<tr data-run=${r.id} class=${app.state.run?.id === r.id ? 'current' : ''}>
                <td>
                  <vscode-checkbox
                    aria-label=${`Pick ${r.label}`}
                    .checked=${picked.includes(r.id)}
                    @change=${(e: Event) => app.dispatch({ type: 'pick', id: r.id, on: (e.currentTarget as Check).checked })}
                  ></vscode-checkbox>
                </td>
                <td class="run-cell">
                  <div class="run-name" title=${r.file}>${r.label}</div>
                  <div class="run-context muted" title=${contextText(r)}>${[when(r.startedAt), `${r.pattern} · ${r.mode}`, contextText(r)].filter(Boolean).join(' · ')}</div>
                </td>
                <td class="run-ended" data-ended=${ended(r)}>${ended(r)}</td>
                <td class="num">${int(r.summary.ok)} / ${int(r.summary.failed)}${r.summary.cancelled ? html` <span class="cancelled">· ${int(r.summary.cancelled)} cancelled</span>` : nothing}</td>
                <td class="actions">
                  <vscode-button secondary data-action="open" @click=${() => void app.openRun(r.id)}>Open</vscode-button>
                  ${r.detached
                    ? html`<span class="muted" data-detached-where>on ${r.detached.where}</span>`
                    : html`<vscode-button secondary data-action="rerun" @click=${() => app.rerun(r.id)}>Rerun</vscode-button>
                        ${continueButtons(app, r.id, continuable(r), true)}
                        <vscode-button secondary data-action="export-jsonl" @click=${() => void app.exportRun(r.id, 'jsonl')}>JSONL</vscode-button>
                        <vscode-button secondary data-action="export-csv" @click=${() => void app.exportRun(r.id, 'csv')}>CSV</vscode-button>
                        <vscode-button secondary icon="edit" data-action="rename" title="Rename" aria-label=${`Rename ${r.label}`} @click=${() => void app.ask('renameRun', { id: r.id })}></vscode-button>
                        <vscode-button secondary icon="trash" data-action="delete" title="Delete" aria-label=${`Delete ${r.label}`} @click=${() => void app.ask('deleteRun', { id: r.id })}></vscode-button>`}
                </td>
                <td class="num h-wide">${figure(r.summary.wallMs, 'ms')}</td>
                <td class="num h-wide">${figure(r.summary.promptThroughput, 'rate')}</td>
              </tr>`,
            )}
          </tbody>
        </table>`
      : html`<p class="empty" id="history-empty">No saved runs yet. Every run is saved under the workspace's runs folder.</p>`}
  </div>`;
}

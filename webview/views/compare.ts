/**
 * Timing comparison, batched vs individual on the same prompts: per arm the median over its rounds
 * with the spread, the template path each arm took, per-endpoint counts, and three uPlot charts.
 */
import { html, nothing } from 'lit';
import type { App } from '../app.ts';
import { latencySpec, loadSpec, timelineSpec } from '../charts/specs.ts';
import { figure, int } from '../lib/format.ts';
import { ARMS, endpointRows, figureRows, roundsOf, verdict, type Arm, type Spread } from '../lib/stats.ts';

function cell(s: Spread | null, unit: 'ms' | 'count' | 'rate', best: boolean) {
  if (!s) return html`<td class="num">—</td>`;
  const spread = s.n > 1 && s.max !== s.min ? `${figure(s.min, unit)} – ${figure(s.max, unit)}` : '';
  return html`<td class=${best ? 'num best' : 'num'}>
    <span class="median">${figure(s.median, unit)}</span>${spread ? html`<span class="spread" title="min – max over ${s.n} rounds">${spread}</span>` : nothing}
  </td>`;
}

function bestArm(a: Spread | null, b: Spread | null, better: 'lower' | 'higher' | null): Arm | null {
  if (!a || !b || !better || a.median === b.median) return null;
  return (better === 'lower') === a.median < b.median ? 'batched' : 'individual';
}

export function compareView(app: App) {
  const c = app.comparison;
  if (!c) return html`<p class="empty" id="compare-empty">No comparison yet: tick “Run both and compare” in Compose (scatter or map), then Run.</p>`;
  const rows = figureRows(c);
  const eps = endpointRows(c);
  const n = Math.max(roundsOf(c, 'batched').length, roundsOf(c, 'individual').length);
  const round = Math.min(Math.max(1, app.ui.timelineRound), Math.max(1, n));
  // Rounds by position (the core counts them from 0; shown from 1).
  const pick = (arm: Arm) => roundsOf(c, arm)[round - 1] ?? roundsOf(c, arm)[0];
  const shown = ARMS.map(pick);
  const xMax = Math.max(1, ...shown.flatMap((r) => (r ? r.requests.map((q) => q.doneMs) : [])));
  const lanes = eps.map((e) => e.endpoint);
  const say = verdict(rows);
  return html`<div class="compare" id="compare" data-view="compare">
    <p class="lead">
      ${n} round${n === 1 ? '' : 's'} per arm, the order alternating (ABBA…) · prefix cache ${c.cacheSalt ? 'salted per arm (cache_salt)' : 'shared (no cache_salt)'}
      ${say ? html`· <b id="verdict">${say}</b>` : nothing}
    </p>
    <dl class="paths" id="template-paths">
      <div><dt>batched</dt><dd>${c.templatePaths.batched}</dd></div>
      <div><dt>individual</dt><dd>${c.templatePaths.individual}</dd></div>
    </dl>
    <div class="compare-grid">
      <table class="figures-table" id="compare-figures">
        <caption>Median over rounds (min – max)</caption>
        <thead>
          <tr><th scope="col"></th>${ARMS.map((a) => html`<th scope="col" class="arm-${a}">${a}</th>`)}</tr>
        </thead>
        <tbody>
          ${rows.map((r) => {
            const best = bestArm(r.arms.batched, r.arms.individual, r.better);
            return html`<tr data-figure=${r.label}>
              <th scope="row">${r.label}</th>
              ${ARMS.map((a) => cell(r.arms[a], r.unit, best === a))}
            </tr>`;
          })}
        </tbody>
      </table>
      <table class="figures-table" id="compare-endpoints">
        <caption>Per endpoint: HTTP requests · prompts (median)</caption>
        <thead>
          <tr><th scope="col">endpoint</th>${ARMS.map((a) => html`<th scope="col" class="arm-${a}">${a}</th>`)}</tr>
        </thead>
        <tbody>
          ${eps.map(
            (e) => html`<tr>
              <th scope="row">${e.endpoint}</th>
              ${ARMS.map((a) => {
                const v = e.arms[a];
                return html`<td class="num">${v ? `${int(v.requests)} · ${int(v.prompts)}` : '—'}</td>`;
              })}
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <section class="chart-block">
      <div class="chart-head">
        <h3>Requests over time, per endpoint</h3>
        ${n > 1
          ? html`<vscode-single-select
              id="timeline-round"
              aria-label="Round"
              .value=${String(round)}
              @change=${(e: Event) => {
                app.ui.timelineRound = Number((e.currentTarget as HTMLElement & { value: string }).value);
                app.persist();
                app.invalidate();
              }}
            >
              ${Array.from({ length: n }, (_, i) => html`<vscode-option value=${String(i + 1)} ?selected=${round === i + 1}>round ${i + 1}</vscode-option>`)}
            </vscode-single-select>`
          : nothing}
      </div>
      <p class="help">One bar per HTTP request, from send to done, on a shared time axis: batching shows as a few long bars, individual prompts as many short ones.</p>
      ${shown.map((r) =>
        r
          ? html`<div class="timeline" data-arm=${r.arm}>
              <div class="chart-title arm-${r.arm}">${r.arm} · ${int(r.requests.length)} HTTP requests · ${figure(r.summary.wallMs, 'ms')}</div>
              <swarm-chart class="chart" data-chart=${`timeline-${r.arm}`} .spec=${timelineSpec(r, round, xMax, app.theme, lanes)}></swarm-chart>
            </div>`
          : nothing,
      )}
    </section>
    <div class="chart-row">
      <section class="chart-block">
        <h3>Latency distribution (E2EL, all rounds)</h3>
        <swarm-chart class="chart" data-chart="latency" .spec=${latencySpec(c, app.theme)}></swarm-chart>
      </section>
      <section class="chart-block">
        <h3>Load per endpoint (prompts, median)</h3>
        <swarm-chart class="chart" data-chart="load" .spec=${loadSpec(c, app.theme)}></swarm-chart>
      </section>
    </div>
  </div>`;
}

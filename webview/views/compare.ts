/**
 * Timing comparison, batched vs individual on the same prompts: per arm the median over its rounds
 * with the spread, the template path each arm took, per-endpoint counts, and three uPlot charts.
 */
import { html, nothing } from 'lit';
import type { PanelApp as App } from '../panel-app.ts';
import { densitySpec, latencySpec, loadSpec, MAX_LANES, MAX_NAMED_ENDPOINTS, timelineSpec } from '../charts/specs.ts';
import { figure, int } from '../lib/format.ts';
import { ARMS, armLosses, endpointRows, figureRows, loadDistribution, lossText, roundsOf, tooClose, verdict, type Arm, type EndpointRow, type FigureRow, type Spread } from '../lib/stats.ts';
import { when } from '../lib/format.ts';
import { metricHelp, requestsByPathText } from '../lib/latency.ts';
import { armRequests } from '../../src/core/run/stats.ts';

/** Endpoint rows the table shows before "Show all": the ones that failed most, then the busiest. */
const SHOW_ENDPOINTS = 12;
let showAllEndpoints = false;

function cell(s: Spread | null, unit: 'ms' | 'count' | 'rate', best: boolean, title = '') {
  if (!s) return html`<td class="num">—</td>`;
  const spread = s.n > 1 && s.max !== s.min ? `${figure(s.min, unit)} – ${figure(s.max, unit)}` : '';
  return html`<td class=${best ? 'num best' : 'num'} title=${title}>
    <span class="median">${figure(s.median, unit)}</span>${spread ? html`<span class="spread" title="min – max over ${s.n} rounds">${spread}</span>` : nothing}
  </td>`;
}

/**
 * The arm a figure favours, if any: none for figures without a better side or medians too close to
 * call. On speed, an arm that lost prompts the other did not is no winner (the verdict says why).
 */
function bestArm(row: FigureRow, lost: Record<Arm, number>): Arm | null {
  const [a, b] = [row.arms.batched, row.arms.individual];
  if (!a || !b || !row.better || tooClose(a.median, b.median)) return null;
  const best: Arm = (row.better === 'lower') === a.median < b.median ? 'batched' : 'individual';
  const other: Arm = best === 'batched' ? 'individual' : 'batched';
  const speed = !row.label.startsWith('prompts ');
  return speed && lost[best] > lost[other] ? null : best;
}

/** Under the load distribution: each arm's spread over the endpoints and its most loaded ones, named. */
function loadSummary(eps: readonly EndpointRow[]) {
  const { arms } = loadDistribution(eps);
  return html`<ul class="load-summary" id="load-summary">
    ${ARMS.map((a) => {
      const l = arms[a];
      return l
        ? html`<li data-arm=${a}>
            <span class="swatch arm-${a}" aria-hidden="true"></span>${a}: ${int(l.endpoints)} endpoints, ${l.min === l.max
              ? html`${figure(l.min, 'count')} prompts each`
              : html`${figure(l.min, 'count')} – ${figure(l.max, 'count')} prompts each (median ${figure(l.median, 'count')}); most:
                  ${l.top.map((t, i) => html`${i ? ', ' : ''}<span class="endpoint" title=${t.endpoint}>${t.endpoint}</span> (${figure(t.prompts, 'count')})`)}`}
          </li>`
        : nothing;
    })}
  </ul>`;
}

export function compareView(app: App) {
  const of = app.state.comparison;
  const c = of?.view;
  if (!of || !c) return html`<p class="empty" id="compare-empty">No comparison yet: tick “Run both and compare” in Compose (scatter or map), then Run.</p>`;
  const rows = figureRows(c);
  const eps = endpointRows(c);
  const n = Math.max(roundsOf(c, 'batched').length, roundsOf(c, 'individual').length);
  const round = Math.min(Math.max(1, app.state.ui.timelineRound), Math.max(1, n));
  // Rounds by position (the core counts them from 0; shown from 1).
  const pick = (arm: Arm) => roundsOf(c, arm)[round - 1] ?? roundsOf(c, arm)[0];
  const shown = ARMS.map(pick);
  const xMax = Math.max(1, ...shown.flatMap((r) => (r ? r.requests.map((q) => q.doneMs) : [])));
  const lanes = eps.map((e) => e.endpoint);
  const dense = lanes.length > MAX_LANES;
  // Prompts each endpoint failed, per arm, over the rounds.
  const failures: Record<Arm, Map<string, number>> = { batched: new Map(), individual: new Map() };
  for (const r of c.rounds) for (const e of r.summary.endpoints) failures[r.arm].set(e.endpoint, (failures[r.arm].get(e.endpoint) ?? 0) + e.failed);
  const failedOn = (e: (typeof eps)[number]) => ARMS.reduce((n, a) => n + (failures[a].get(e.endpoint) ?? 0), 0);
  const load = (e: (typeof eps)[number]) => ARMS.reduce((n, a) => n + (e.arms[a]?.prompts ?? 0), 0);
  const listed = showAllEndpoints || eps.length <= SHOW_ENDPOINTS ? eps : [...eps].sort((a, b) => failedOn(b) - failedOn(a) || load(b) - load(a)).slice(0, SHOW_ENDPOINTS);
  const say = verdict(c);
  const losses = { batched: armLosses(c, 'batched'), individual: armLosses(c, 'individual') };
  const lost = { batched: losses.batched.failed + losses.batched.cancelled, individual: losses.individual.failed + losses.individual.cancelled };
  const run = app.state.run;
  const live = run?.id === of.runId && run.running;
  const started = app.state.history.find((h) => h.id === of.runId)?.startedAt;
  return html`<div class="compare" id="compare" data-view="compare" data-run=${of.runId}>
    <h2 class="compare-of" id="compare-of">Comparison of <span class="run-name">${of.label}</span>${started ? html` <span class="muted">· ${when(started)}</span>` : nothing}${live
        ? html` <span class="muted">· running</span>`
        : nothing}</h2>
    <ul class="arm-losses" id="arm-losses">
      ${ARMS.map((a) => {
        const l = losses[a];
        const text = lossText(l);
        return html`<li class="arm-${a}" data-arm=${a} data-lost=${lost[a]}>
          <b>${a}</b>: ${int(l.rounds)} round${l.rounds === 1 ? '' : 's'} · ${text ? html`<span class="failed">${text}</span>` : 'every prompt answered'}
        </li>`;
      })}
    </ul>
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
            const best = bestArm(r, lost);
            return html`<tr data-figure=${r.label}>
              <th scope="row" title=${metricHelp(r.label)}>${r.label}</th>
              ${ARMS.map((a) => cell(r.arms[a], r.unit, best === a, r.label === 'HTTP requests' ? `${a}, all rounds:\n${requestsByPathText(armRequests(c.rounds, a).byPath)}` : ''))}
            </tr>`;
          })}
        </tbody>
      </table>
      <table class="figures-table" id="compare-endpoints">
        <caption>
          Per endpoint: HTTP requests · prompts (median)${listed.length < eps.length ? html` — the ${int(listed.length)} that failed most, then the busiest, of ${int(eps.length)}` : nothing}
        </caption>
        <thead>
          <tr><th scope="col">endpoint</th>${ARMS.map((a) => html`<th scope="col" class="arm-${a}">${a}</th>`)}</tr>
        </thead>
        <tbody>
          ${listed.map(
            (e) => html`<tr data-endpoint=${e.endpoint}>
              <th scope="row">${e.endpoint}</th>
              ${ARMS.map((a) => {
                const v = e.arms[a];
                const lostHere = failures[a].get(e.endpoint) ?? 0;
                return html`<td class="num">${v ? `${int(v.requests)} · ${int(v.prompts)}` : '—'}${lostHere ? html` <span class="failed">· ${int(lostHere)} failed over ${int(roundsOf(c, a).length)} round${roundsOf(c, a).length === 1 ? '' : 's'}</span>` : nothing}</td>`;
              })}
            </tr>`,
          )}
        </tbody>
      </table>
      ${listed.length < eps.length
        ? html`<vscode-button
            secondary
            id="all-endpoints"
            @click=${() => {
              showAllEndpoints = true;
              app.invalidate();
            }}
            >Show all ${int(eps.length)} endpoints</vscode-button
          >`
        : nothing}
    </div>
    <section class="chart-block">
      <div class="chart-head">
        <h3>${dense ? 'Requests in flight over time' : 'Requests over time, per endpoint'}</h3>
        ${n > 1
          ? html`<vscode-single-select
              id="timeline-round"
              aria-label="Round"
              .value=${String(round)}
              @change=${(e: Event) => app.dispatch({ type: 'timelineRound', round: Number((e.currentTarget as HTMLElement & { value: string }).value) })}
            >
              ${Array.from({ length: n }, (_, i) => html`<vscode-option value=${String(i + 1)} ?selected=${round === i + 1}>round ${i + 1}</vscode-option>`)}
            </vscode-single-select>`
          : nothing}
      </div>
      <p class="help">
        ${dense
          ? `${int(lanes.length)} endpoints: requests and prompts in flight over time, on a shared time axis (a lane per endpoint up to ${MAX_LANES}). Batching shows as a few requests carrying many prompts.`
          : 'One bar per HTTP request, from send to done, on a shared time axis: batching shows as a few long bars, individual prompts as many short ones. Hover a bar for its times and status.'}
      </p>
      ${dense
        ? nothing
        : html`<ul class="timeline-legend" id="timeline-legend" aria-label="Legend">
            ${ARMS.map((a) => html`<li><span class="swatch arm-${a}" aria-hidden="true"></span>${a} request</li>`)}
            <li><span class="swatch failed-request" aria-hidden="true"></span>failed request (${int(shown.reduce((n, r) => n + (r?.requests.filter((q) => q.failed).length ?? 0), 0))} in this round)</li>
          </ul>`}
      ${shown.map((r) =>
        r
          ? html`<div class="timeline" data-arm=${r.arm}>
              <div class="chart-title arm-${r.arm}">${r.arm} · ${int(r.requests.length)} generation requests · ${figure(r.summary.wallMs, 'ms')}</div>
              <swarm-chart
                class="chart"
                data-chart=${`timeline-${r.arm}`}
                .spec=${dense ? densitySpec(r, round, xMax, app.theme, lanes.length) : timelineSpec(r, round, xMax, app.theme, lanes)}
              ></swarm-chart>
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
        <h3>${eps.length > MAX_NAMED_ENDPOINTS ? 'Load over the endpoints (prompts, median round)' : 'Load per endpoint (prompts, median)'}</h3>
        <swarm-chart class="chart" data-chart="load" .spec=${loadSpec(eps, app.theme)}></swarm-chart>
        ${eps.length > MAX_NAMED_ENDPOINTS ? loadSummary(eps) : nothing}
      </section>
    </div>
  </div>`;
}

/**
 * The experiment view drawn from the host's latest `ExperimentView`: a reducer's output, nothing kept
 * but which run's servers are shown. The host sends the whole view at every server reading (about one
 * a second): the page is patched, not rebuilt, so only what changed is touched. Text only
 * (textContent), never HTML: names and errors come from files and servers.
 */
import type { ExperimentRun, ExperimentView, SweepRow } from '../../src/panel/experiment-protocol.ts';
import type { SweepMetric } from '../../src/core/run/sweep.ts';
import type { SwarmChart } from '../charts/chart.ts';
import { readColors, serversSpec, sweepSpec } from './specs.ts';

type Child = Node | string | null | false;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== false) e.append(c);
  return e;
}

const fmt = (n: number | null) => (n === null ? '—' : Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toPrecision(3));
const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
const runLabel = (r: { value: number | null; arm: string; repetition: number }) => `${r.value ?? ''} ${r.arm} #${r.repetition}`.trim();

function table(head: string[], rows: Child[][], textColumns = 1): HTMLElement {
  const cls = (i: number): Record<string, string> => (i < textColumns ? { class: 'text' } : {});
  return el('div', { class: 'scroll' }, el('table', { class: 'data' }, el('thead', {}, el('tr', {}, ...head.map((h, i) => el('th', { scope: 'col', ...cls(i) }, h)))), el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c, i) => el('td', cls(i), c)))))));
}

function chart(spec: ReturnType<typeof sweepSpec>, id: string): HTMLElement {
  const c = el('swarm-chart', { id }) as unknown as SwarmChart;
  c.spec = spec;
  return c as unknown as HTMLElement;
}

/**
 * One part of the page: drawn anew only when what it shows (its signature) changed, so a reading a
 * second leaves the rest of the page — an open picker, the focus, a table's scroll — as it was.
 */
class Part {
  private sig: string | undefined;
  readonly box = el('div', { class: 'part' });

  /** Draws `build()` when `sig` differs from what is drawn. */
  put(sig: string, build: () => Child): void {
    if (sig === this.sig) return;
    this.sig = sig;
    const node = build();
    this.box.replaceChildren(...(node === null || node === false ? [] : [node]));
  }
}

/** The servers section's elements, built once and then patched: a new reading sets the chart's data and the caption's text. */
interface ServersSection {
  root: HTMLElement;
  pick: HTMLSelectElement;
  chart: SwarmChart;
  caption: HTMLElement;
  client: Part;
  /** The chart's spec key drawn. */
  key: string;
}

export class ExperimentViewer {
  private view: ExperimentView | null = null;
  /** The run whose servers are drawn; null: the latest. */
  private picked: string | null = null;
  private colors: ReturnType<typeof readColors> | null = null;
  private readonly status = el('span', { id: 'exp-status', role: 'status' });
  private readonly title = el('span');
  private readonly stopButton = el('button', { id: 'exp-stop', title: 'End the experiment; runs that finished are kept' }, 'Stop');
  private readonly folder = el('div', { class: 'muted' });
  private readonly error = new Part();
  private readonly sweep = new Part();
  private readonly servers = new Part();
  private serversSection: ServersSection | null = null;
  private readonly runs = new Part();
  private runsBody: HTMLTableSectionElement | null = null;

  constructor(root: HTMLElement, stop: () => void) {
    this.stopButton.addEventListener('click', () => stop());
    root.replaceChildren(el('h2', {}, this.title, this.status, this.stopButton), this.folder, this.error.box, this.sweep.box, this.servers.box, this.runs.box);
  }

  show(view: ExperimentView): void {
    this.view = view;
    this.draw();
  }

  /** Draws the latest view again in the theme's colours (they changed). */
  render(): void {
    this.colors = null;
    this.draw();
  }

  /** Patches the page to the latest view: only the parts whose content changed are touched. */
  private draw(): void {
    const v = this.view;
    if (!v) return;
    this.colors ??= readColors();
    const name = v.file.split(/[\\/]/).pop() ?? v.file;
    const status = v.status === 'running' ? `running · ${v.runs.length} run${v.runs.length === 1 ? '' : 's'} done` : `${v.status} · ${v.runs.length} run${v.runs.length === 1 ? '' : 's'}${v.exitCode !== null && v.exitCode !== 0 ? ` · exit ${v.exitCode}` : ''}`;
    setText(this.title, `Experiment ${name}`);
    setText(this.status, status);
    if (this.status.className !== `status ${v.status}`) this.status.className = `status ${v.status}`;
    this.stopButton.hidden = v.status !== 'running';
    setText(this.folder, `runs saved in ${v.folder}`);
    this.error.put(v.error ?? '', () => (v.error ? el('p', { class: 'error', id: 'exp-error' }, v.error) : null));
    // The sweep comes once, at the end: its signature is cheap while it is null.
    this.sweep.put(`${this.colors.key}\n${v.status === 'running'}\n${JSON.stringify(v.sweep)}`, () => this.sweepSection(v));
    this.drawServers(v);
    this.drawRuns(v);
  }

  /** The sweep's table and chart, the planner's prediction beside each run. */
  private sweepSection(v: ExperimentView): HTMLElement | null {
    const s = v.sweep;
    if (!s) return v.status === 'running' ? el('p', { class: 'muted' }, 'The sweep\'s table and chart come when every run is in.') : null;
    const metric = s.metric as SweepMetric;
    const predicted = (row: SweepRow) => {
      const p = s.plan.rows.filter((r) => r.arm === row.arm && r.value === (row.value || null)).map((r) => r.predictedMs);
      return p.length ? secs(p.sort((a, b) => a - b)[p.length >> 1]!) : '—';
    };
    const rows = s.rows.map((r) => {
      const m = r.metrics[metric];
      return [String(r.value), r.arm, m ? fmt(m.median) : 'n/a', m ? `${fmt(m.q1)} – ${fmt(m.q3)}` : 'n/a', String(r.runs), predicted(r)];
    });
    const plan = s.plan;
    return el(
      'section',
      { id: 'exp-sweep' },
      el('h3', {}, new Set(s.rows.map((r) => r.value)).size > 1 ? `Sweep: ${s.metric} against ${s.parameter}` : `Result: ${s.metric}`),
      // One value (an experiment without a sweep) is a row, not a chart.
      new Set(s.rows.map((r) => r.value)).size > 1 ? chart(sweepSpec(s, this.colors!), 'exp-sweep-chart') : null,
      table([s.parameter, 'arm', `${s.metric} median`, 'IQR (q1 – q3)', 'runs', 'predicted wall'], rows, 2),
      el('h3', {}, 'Planner: predicted beside measured'),
      plan.note ? el('p', { class: 'muted', id: 'exp-plan-note' }, plan.note) : null,
      plan.rows.length
        ? el(
            'div',
            { id: 'exp-plan' },
            el('p', { class: 'muted' }, `fitted on ${plan.fittedOn} (its streamed timings), every other closed run predicted`),
            table(
              ['run', 'predicted', 'measured', 'error'],
              plan.rows.map((r) => [`${runLabel(r)}${r.fitted ? ' (fitted)' : ''}`, secs(r.predictedMs), secs(r.measuredMs), `${(((r.predictedMs - r.measuredMs) / r.measuredMs) * 100).toFixed(1)} %`]),
            ),
          )
        : null,
    );
  }

  /**
   * One run's servers against time, beside the client's figures for the same run; the run under way
   * (drawn as its readings come) until another is picked. Built once; each reading patches it.
   */
  private drawServers(v: ExperimentView): void {
    const live = v.live?.servers.length ? v.live : null;
    const withServers: Array<Pick<ExperimentRun, 'name' | 'servers'> & Partial<ExperimentRun>> = [...v.runs.filter((r) => r.servers.length), ...(live ? [live] : [])];
    if (!withServers.length) {
      this.serversSection = null;
      this.servers.put(v.runs.length || v.live ? 'none' : '', () => (v.runs.length || v.live ? el('p', { class: 'muted' }, 'No server readings yet (the servers are read once a second; a run shorter than that has none).') : null));
      return;
    }
    const s = (this.serversSection ??= this.buildServers());
    this.servers.put('section', () => s.root);
    const run = withServers.find((r) => r.name === this.picked) ?? withServers.at(-1)!;
    const running = run === live;
    const options = withServers.map((r) => ({ value: r.name, label: r === live ? `${r.name} (running)` : r.name }));
    const current = [...s.pick.options];
    // The options change only when a run starts or ends: an open picker is left alone between.
    if (current.length !== options.length || current.some((o, i) => o.value !== options[i]!.value || o.text !== options[i]!.label)) {
      s.pick.replaceChildren(...options.map((o) => el('option', { value: o.value }, o.label)));
    }
    for (const o of s.pick.options) if (o.defaultSelected !== (o.value === run.name)) o.defaultSelected = o.value === run.name;
    if (s.pick.value !== run.name) s.pick.value = run.name;
    const spec = serversSpec(run, this.colors!);
    if (spec.key !== s.key) {
      s.chart.spec = spec;
      s.key = spec.key;
    }
    const last = run.servers.at(-1)!;
    const sampled = last.endpoints > last.asked ? ` (a sample of ${last.asked.toLocaleString('en-US')}, the same each reading, scaled to all ${last.endpoints.toLocaleString('en-US')})` : '';
    setText(
      s.caption,
      `${last.endpoints.toLocaleString('en-US')} endpoints, ${run.servers.length} readings${running ? ' so far' : ''}: sums over the servers that answered${sampled}; KV cache as their median with a band to the 90th percentile. ${running ? 'So far' : 'By the end'}: ${Math.round(last.preemptions).toLocaleString('en-US')} preemptions, ${Math.round(last.generationTokens).toLocaleString('en-US')} tokens generated${last.prefixCacheQueries ? `, prefix-cache hits ${pct(last.prefixCacheHits / last.prefixCacheQueries)}` : ''}.`,
    );
    s.client.put(run.summary ? JSON.stringify([run.summary, run.client ?? null]) : 'running', () =>
      run.summary ? this.clientFigures(run.summary, run.client ?? null) : el('div', { class: 'figures muted', id: 'exp-client' }, 'Running: the client\'s figures for this run come when it ends.'),
    );
  }

  /** The servers section's frame: the picker, the chart and its caption, the client's figures. */
  private buildServers(): ServersSection {
    const pick = el('select', { id: 'exp-servers-run', 'aria-label': 'Run whose servers are drawn' });
    pick.addEventListener('change', () => {
      this.picked = pick.value;
      this.draw();
    });
    const chart = el('swarm-chart', { id: 'exp-servers-chart' });
    const caption = el('div', { class: 'muted' });
    const client = new Part();
    const root = el('section', { id: 'exp-servers' }, el('h3', {}, 'Servers against time, beside the client: ', pick), el('div', { class: 'pair' }, el('div', { class: 'chart-box' }, chart, caption), client.box));
    return { root, pick, chart, caption, client, key: '' };
  }

  /** What the client measured of a finished run, and its self-check. */
  private clientFigures(summary: ExperimentRun['summary'], c: ExperimentRun['client']): HTMLElement {
    return el(
          'div',
          { class: 'figures', id: 'exp-client' },
          el('dl', {}, ...figure('wall time', secs(summary.wallMs)), ...figure('prompts', `${summary.ok.toLocaleString('en-US')} ok · ${summary.failed} failed`), ...figure('prompts/s', fmt(summary.promptThroughput)), ...figure('output tokens/s', fmt(summary.outputTokenThroughput)), ...(summary.ttftMedianMs === null ? [] : figure('TTFT median', `${fmt(summary.ttftMedianMs)} ms`)), ...(c ? [...figure('client CPU / request', `${c.cpuPerRequestMs.toFixed(c.cpuPerRequestMs < 1 ? 3 : 2)} ms`), ...figure('client event loop', pct(c.eventLoopBusy))] : [])),
          c?.clientBound ? el('p', { class: 'warning', id: 'exp-client-bound' }, `The client's event loop was busy ${pct(c.eventLoopBusy)} of the run: the client, not the servers, bounded it.`) : null,
        );
  }

  /** The finished runs, one row each; runs only come, so a new one is a row appended (the table's scroll stays). */
  private drawRuns(v: ExperimentView): void {
    if (!v.runs.length) {
      this.runs.put('', () => null);
      this.runsBody = null;
      return;
    }
    this.runs.put('runs', () => {
      const t = table(['run', 'wall', 'ok', 'failed', 'prompts/s', 'client CPU / request', 'event loop'], []);
      this.runsBody = t.querySelector('tbody');
      return el('section', { id: 'exp-runs' }, el('h3', {}, 'Runs'), t);
    });
    const body = this.runsBody!;
    if (body.rows.length > v.runs.length) body.replaceChildren();
    for (const r of v.runs.slice(body.rows.length)) {
      body.append(el('tr', {}, ...[runLabel(r.point), secs(r.summary.wallMs), r.summary.ok.toLocaleString('en-US'), String(r.summary.failed), fmt(r.summary.promptThroughput), r.client ? `${r.client.cpuPerRequestMs.toFixed(2)} ms` : '—', r.client ? pct(r.client.eventLoopBusy) : '—'].map((c, i) => el('td', i < 1 ? { class: 'text' } : {}, c))));
    }
  }
}

/** Sets a text that changed (an equal one would still be a mutation, and move a selection in it). */
function setText(e: HTMLElement, text: string): void {
  if (e.textContent !== text) e.textContent = text;
}

function figure(name: string, value: string): HTMLElement[] {
  return [el('dt', {}, name), el('dd', {}, value)];
}

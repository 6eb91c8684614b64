/**
 * The experiment view's two charts: a sweep's metric against its parameter (each arm's median over the
 * repetitions, its interquartile range as a band, and the planner's predicted wall time beside it), and
 * one run's servers against time, aggregated over however many endpoints it had: sums of running and
 * waiting sequences, and the KV cache's usage as the servers' median with a band up to their 90th
 * percentile (1,000 servers are a band, not 1,000 lines).
 */
import uPlot from 'uplot';
import type { ExperimentRun, ExperimentView } from '../../src/panel/experiment-protocol.ts';
import type { SweepMetric } from '../../src/core/run/sweep.ts';
import type { ChartSpec } from '../charts/chart.ts';

interface Colors {
  fg: string;
  grid: string;
  font: string;
  series: string[];
  key: string;
}

export function readColors(): Colors {
  const css = getComputedStyle(document.body);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const c = {
    fg: v('--vscode-charts-foreground', v('--vscode-foreground', '#cccccc')),
    grid: v('--vscode-charts-lines', 'rgba(128,128,128,0.35)'),
    font: `11px ${v('--vscode-font-family', 'sans-serif')}`,
    series: [v('--vscode-charts-blue', '#3794ff'), v('--vscode-charts-orange', '#d18616'), v('--vscode-charts-green', '#89d185'), v('--vscode-charts-purple', '#b180d7'), v('--vscode-charts-red', '#f14c4c')],
  };
  return { ...c, key: JSON.stringify(c) };
}

const axis = (c: Colors, extra: uPlot.Axis = {}): uPlot.Axis => ({ stroke: c.fg, font: c.font, labelFont: c.font, grid: { stroke: c.grid, width: 1 }, ticks: { stroke: c.grid, width: 1 }, ...extra });

/** `#rrggbb` with alpha; other colours as they are. */
function alpha(color: string, a: number): string {
  const m = /^#([0-9a-f]{6})$/i.exec(color);
  if (!m) return color;
  const n = parseInt(m[1]!, 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** The metric against the parameter, one line per arm with its IQR band; the planner's prediction (wall time) dashed beside it. */
export function sweepSpec(sweep: NonNullable<ExperimentView['sweep']>, c: Colors): ChartSpec {
  const values = [...new Set(sweep.rows.map((r) => r.value))].sort((a, b) => a - b);
  const arms = [...new Set(sweep.rows.map((r) => r.arm))];
  const metric = sweep.metric as SweepMetric;
  const at = (arm: string, v: number) => sweep.rows.find((r) => r.arm === arm && r.value === v)?.metrics[metric] ?? null;
  const data: Array<Array<number | null>> = [values];
  const series: uPlot.Series[] = [{ label: sweep.parameter }];
  const bands: uPlot.Band[] = [];
  arms.forEach((arm, i) => {
    const color = c.series[i % c.series.length]!;
    const base = data.length;
    data.push(values.map((v) => at(arm, v)?.median ?? null), values.map((v) => at(arm, v)?.q3 ?? null), values.map((v) => at(arm, v)?.q1 ?? null));
    series.push({ label: `${arm} median`, stroke: color, width: 2, points: { show: true, size: 6 } }, { label: `${arm} q3`, stroke: alpha(color, 0.4), width: 1 }, { label: `${arm} q1`, stroke: alpha(color, 0.4), width: 1 });
    bands.push({ series: [base + 1, base + 2], fill: alpha(color, 0.18) });
  });
  const predicted = metric === 'wall_s' ? sweep.plan.rows : [];
  if (predicted.length) {
    arms.forEach((arm, i) => {
      const color = c.series[i % c.series.length]!;
      const ys = values.map((v) => {
        const p = predicted.filter((r) => r.arm === arm && r.value === v).map((r) => r.predictedMs / 1000);
        return p.length ? median(p) : null;
      });
      if (ys.some((y) => y !== null)) {
        data.push(ys);
        series.push({ label: `${arm} predicted`, stroke: color, width: 2, dash: [6, 4], points: { show: true, size: 5, fill: 'transparent' } });
      }
    });
  }
  return {
    key: `sweep:${c.key}:${JSON.stringify(data)}`,
    label: `${sweep.metric} against ${sweep.parameter}: median of the repetitions with their interquartile range${predicted.length ? ', and the planner\'s predicted wall time' : ''}`,
    make: () => ({
      opts: {
        height: 260,
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(1e-9, max * 1.1)] } },
        axes: [axis(c, { label: sweep.parameter }), axis(c, { label: sweep.metric, size: 60 })],
        series,
        bands,
        legend: { live: false },
        cursor: { drag: { x: false, y: false } },
      },
      data: data as uPlot.AlignedData,
    }),
  };
}

/** One run's servers against time: running and waiting (sums over its servers), KV-cache usage (median and p90 over them, %). */
export function serversSpec(run: Pick<ExperimentRun, 'name' | 'servers'>, c: Colors): ChartSpec {
  const r = run.servers;
  const pct = (x: number | null | undefined) => (x === null || x === undefined ? null : x * 100);
  const data: uPlot.AlignedData = [
    r.map((l) => l.atMs / 1000),
    r.map((l) => l.running),
    r.map((l) => l.waiting),
    r.map((l) => pct(l.kvCacheUsage?.p90)),
    r.map((l) => pct(l.kvCacheUsage?.median)),
  ];
  const [blue, orange, green] = c.series;
  const endpoints = r.reduce((m, l) => Math.max(m, l.endpoints), 0);
  return {
    key: `servers:${run.name}:${c.key}:${r.length}`,
    // Another reading, or another run picked: the same chart with new data.
    layout: `servers:${c.key}`,
    label: `${run.name}: the servers against time over ${endpoints} endpoints — running and waiting sequences summed, KV-cache usage median and 90th percentile`,
    make: () => ({
      opts: {
        height: 240,
        scales: { x: { time: false }, seqs: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] }, pct: { range: [0, 100] } },
        axes: [axis(c, { label: 'seconds into the run' }), axis(c, { scale: 'seqs', label: 'sequences (sum)', size: 60 }), axis(c, { scale: 'pct', side: 1, label: 'KV cache %', size: 50, grid: { show: false } })],
        series: [
          { label: 's' },
          { label: 'running (sum)', scale: 'seqs', stroke: blue, width: 2 },
          { label: 'waiting (sum)', scale: 'seqs', stroke: orange, width: 2 },
          { label: 'KV p90', scale: 'pct', stroke: alpha(green!, 0.5), width: 1 },
          { label: 'KV median', scale: 'pct', stroke: green, width: 2 },
        ],
        bands: [{ series: [3, 4], fill: alpha(green!, 0.2) }],
        legend: { live: false },
        cursor: { drag: { x: false, y: false } },
      },
      data,
    }),
  };
}

/**
 * The comparison's charts: a per-endpoint timeline of requests (batching shows as few long bars,
 * individual prompts as many short ones), the latency distribution of both arms, and each
 * endpoint's load. Colours come from VS Code's chart variables, so every theme draws its own.
 */
import uPlot from 'uplot';
import type { ArmRound, ComparisonView } from '../../src/panel/protocol.ts';
import { ms } from '../lib/format.ts';
import { ARMS, histogram, inFlight, loadDistribution, timelineLanes, type Arm, type Bar, type EndpointRow } from '../lib/stats.ts';
import type { ChartSpec } from './chart.ts';

export interface Theme {
  fg: string;
  grid: string;
  font: string;
  arm: Record<Arm, string>;
  /** Failed requests: this colour, hatched (colour alone would not tell them apart for everyone). */
  failed: string;
  key: string;
}

export function readTheme(): Theme {
  const css = getComputedStyle(document.body);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const family = v('--vscode-font-family', 'sans-serif');
  const theme = {
    fg: v('--vscode-charts-foreground', v('--vscode-foreground', '#cccccc')),
    grid: v('--vscode-charts-lines', 'rgba(128,128,128,0.35)'),
    font: `11px ${family}`,
    arm: { batched: v('--vscode-charts-blue', '#3794ff'), individual: v('--vscode-charts-orange', '#d18616') },
    failed: v('--vscode-charts-red', '#f14c4c'),
  };
  return { ...theme, key: JSON.stringify(theme) };
}

export const ARM_LABEL: Record<Arm, string> = { batched: 'batched', individual: 'individual' };

function axis(theme: Theme, extra: uPlot.Axis = {}): uPlot.Axis {
  return {
    stroke: theme.fg,
    font: theme.font,
    labelFont: theme.font,
    grid: { stroke: theme.grid, width: 1 },
    ticks: { stroke: theme.grid, width: 1 },
    ...extra,
  };
}

/** `#rrggbb` (or any colour) with alpha, through the canvas's own parser. */
function alpha(color: string, a: number): string {
  const m = /^#([0-9a-f]{6})([0-9a-f]{2})?$/i.exec(color);
  if (!m) return color;
  const n = parseInt(m[1]!, 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
}

/** Diagonal stripes of `color` on a faint ground of it: the failed requests' fill. */
function hatch(ctx: CanvasRenderingContext2D, color: string): CanvasPattern | string {
  const size = Math.round(6 * uPlot.pxRatio);
  const tile = document.createElement('canvas');
  tile.width = tile.height = size;
  const t = tile.getContext('2d');
  if (!t) return color;
  t.fillStyle = alpha(color, 0.3);
  t.fillRect(0, 0, size, size);
  t.strokeStyle = color;
  t.lineWidth = Math.max(1, uPlot.pxRatio * 1.5);
  t.beginPath();
  for (const o of [-size, 0, size]) {
    t.moveTo(o, size);
    t.lineTo(o + size, 0);
  }
  t.stroke();
  return ctx.createPattern(tile, 'repeat') ?? color;
}

/** What a timeline bar says on hover: its endpoint, times, prompts and how it ended. */
export function barText(b: Bar): string {
  const ended = b.failed ? `failed${b.failed < b.prompts ? ` (${b.failed} of ${b.prompts} prompts)` : ''}: ${b.error ?? ''}` : 'ok';
  return `${b.endpoint} · ${ms(b.sentMs)} → ${ms(b.doneMs)} (${ms(b.doneMs - b.sentMs)}) · ${b.prompts} prompt${b.prompts === 1 ? '' : 's'} · ${ended}`;
}

/** Timeline of one arm's round: a lane per endpoint, a bar per HTTP request from send to done; failed ones hatched red. */
export function timelineSpec(round: ArmRound, shownAs: number, xMax: number, theme: Theme, lanesFor: readonly string[]): ChartSpec {
  const { bars, slots: slotCounts, endpoints: seen } = timelineLanes(round.requests);
  const endpoints = lanesFor.length ? [...lanesFor] : seen;
  const slots = new Map(seen.map((e, i) => [e, slotCounts[i]!]));
  const n = Math.max(1, endpoints.length);
  const laneOf = new Map(endpoints.map((e, i) => [e, i]));
  const color = theme.arm[round.arm];
  // A lane says how many of its prompts failed (the request spans carry no status of their own).
  const failed = new Map(round.summary.endpoints.map((e) => [e.endpoint, e.failed]));
  const laneLabels = endpoints.map((e) => (failed.get(e) ? `${e} · ${failed.get(e)} failed` : e));
  const longest = laneLabels.reduce((m, e) => Math.max(m, e.length), 4);
  return {
    key: `timeline:${round.arm}:${round.round}:${shownAs}:${xMax}:${endpoints.join(',')}:${theme.key}`,
    label: `${round.arm} round ${shownAs}: ${round.requests.length} HTTP requests on ${seen.length} endpoints${round.summary.failed ? `, ${round.summary.failed} prompts failed` : ''}`,
    tip: (u, left, top) => {
      const x = u.posToVal(left, 'x');
      const lane = endpoints[n - 1 - Math.floor(u.posToVal(top, 'y'))];
      const slack = u.posToVal(left + 3, 'x') - x; // a 1 px bar is still hit
      const hit = lane === undefined ? undefined : bars.find((b) => b.endpoint === lane && b.sentMs - slack <= x && x <= b.doneMs + slack);
      return hit ? barText(hit) : null;
    },
    make: () => ({
      opts: {
        height: Math.max(110, 26 * n + 48),
        padding: [8, 12, 0, 4],
        legend: { show: false },
        cursor: { show: true, x: true, y: false, points: { show: false }, drag: { x: false, y: false } },
        scales: { x: { time: false, range: [0, Math.max(1, xMax)] }, y: { range: [0, n] } },
        axes: [
          axis(theme, { values: (_u, splits) => splits.map((v) => ms(v)) }),
          axis(theme, {
            grid: { show: false },
            splits: () => endpoints.map((_, i) => n - i - 0.5),
            values: () => laneLabels,
            size: Math.min(240, 12 + longest * 6.5),
          }),
        ],
        series: [{}],
        hooks: {
          draw: [
            (u: uPlot) => {
              const ctx = u.ctx;
              ctx.save();
              ctx.beginPath();
              ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
              ctx.clip();
              const fill = alpha(color, 0.75);
              const failedFill = hatch(ctx, theme.failed);
              ctx.lineWidth = 1;
              const font = theme.font.replace(/^(\d+)px/, (_m, px: string) => `${Math.round(Number(px) * uPlot.pxRatio)}px`);
              ctx.font = font;
              for (const b of bars) {
                const lane = laneOf.get(b.endpoint);
                if (lane === undefined) continue;
                const count = slots.get(b.endpoint) ?? 1;
                const laneTop = n - lane;
                const h = 0.8 / count;
                const top = laneTop - 0.1 - b.slot * h;
                const y0 = u.valToPos(top, 'y', true);
                const y1 = u.valToPos(top - h * 0.85, 'y', true);
                const x0 = u.valToPos(b.sentMs, 'x', true);
                const x1 = u.valToPos(b.doneMs, 'x', true);
                const w = Math.max(1, x1 - x0);
                ctx.fillStyle = b.failed ? failedFill : fill;
                ctx.fillRect(x0, y0, w, Math.max(1, y1 - y0));
                if (b.failed) {
                  ctx.strokeStyle = theme.failed;
                  ctx.strokeRect(x0, y0, w, Math.max(1, y1 - y0));
                }
                if (b.prompts > 1 && w > 40 * uPlot.pxRatio && y1 - y0 > 10 * uPlot.pxRatio) {
                  ctx.fillStyle = theme.fg;
                  ctx.textAlign = 'left';
                  ctx.textBaseline = 'middle';
                  ctx.fillText(`${b.prompts} prompts`, x0 + 4 * uPlot.pxRatio, (y0 + y1) / 2);
                }
              }
              ctx.restore();
            },
          ],
        },
      },
      data: [[0, Math.max(1, xMax)]],
    }),
  };
}

/** Above this many endpoints the timeline is a density (requests in flight), not a lane per endpoint. */
export const MAX_LANES = 32;
/** Above this many endpoints the load chart draws their distribution instead of a bar each. */
export const MAX_NAMED_ENDPOINTS = 24;

/** One arm's round as a density: HTTP requests and prompts in flight over time, for swarms too big for lanes. */
export function densitySpec(round: ArmRound, shownAs: number, xMax: number, theme: Theme, endpoints: number): ChartSpec {
  const { t, requests, prompts } = inFlight(round.requests, Math.max(1, xMax));
  const color = theme.arm[round.arm];
  return {
    key: `density:${round.arm}:${round.round}:${shownAs}:${xMax}:${round.requests.length}:${theme.key}`,
    label: `${round.arm} round ${shownAs}: ${round.requests.length} HTTP requests on ${endpoints} endpoints, in flight over time`,
    make: () => ({
      opts: {
        height: 180,
        padding: [8, 12, 0, 4],
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: false, range: [0, Math.max(1, xMax)] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
        axes: [axis(theme, { values: (_u, splits) => splits.map((v) => ms(v)), label: 'time since the arm started', labelSize: 18 }), axis(theme, { size: 52, label: 'in flight', labelSize: 18 })],
        series: [
          { label: 'time', value: (_u, v) => (v === null ? '—' : ms(v)) },
          { label: 'HTTP requests', stroke: color, fill: alpha(color, 0.35), width: 1, points: { show: false }, paths: uPlot.paths.stepped!({ align: 1 }) },
          { label: 'prompts', stroke: theme.fg, width: 1, dash: [4, 3], points: { show: false }, paths: uPlot.paths.stepped!({ align: 1 }) },
        ],
      },
      data: [t, requests, prompts],
    }),
  };
}

function barSeries(theme: Theme, arm: Arm, align: -1 | 1): uPlot.Series {
  return {
    label: ARM_LABEL[arm],
    stroke: theme.arm[arm],
    fill: alpha(theme.arm[arm], 0.7),
    width: 1,
    points: { show: false },
    paths: uPlot.paths.bars!({ size: [0.45, 60], align }),
  };
}

/** Histogram of both arms' end-to-end latencies, all rounds pooled, on shared bins. */
export function latencySpec(c: ComparisonView, theme: Theme): ChartSpec {
  const byArm = { batched: [] as number[], individual: [] as number[] };
  // One by one: spreading 100,000 latencies into push() overflows the call stack.
  for (const r of c.rounds) for (const ms of r.latenciesMs) byArm[r.arm].push(ms);
  const { edges, counts } = histogram(byArm, 24);
  const centers = edges.slice(0, -1).map((e, i) => (e + edges[i + 1]!) / 2);
  const step = edges.length > 1 ? edges[1]! - edges[0]! : 1;
  return {
    key: `latency:${c.rounds.length}:${edges.length}:${edges[0]}:${edges[edges.length - 1]}:${theme.key}`,
    label: `Latency distribution: ${byArm.batched.length} batched and ${byArm.individual.length} individual prompts`,
    make: () => ({
      opts: {
        height: 220,
        padding: [8, 12, 0, 4],
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: false, range: [(edges[0] ?? 0) - step / 2, (edges[edges.length - 1] ?? 1) + step / 2] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
        // Labelled axes; the legend follows the cursor, so hovering a bin shows its counts.
        axes: [axis(theme, { values: (_u, splits) => splits.map((v) => ms(v)), label: 'end-to-end latency', labelSize: 18 }), axis(theme, { size: 44, label: 'prompts', labelSize: 18 })],
        series: [{ label: 'E2EL', value: (_u, v) => (v === null ? '—' : `${ms(v - step / 2)} – ${ms(v + step / 2)}`) }, barSeries(theme, 'batched', -1), barSeries(theme, 'individual', 1)],
      },
      data: [centers, counts.batched.map((n) => n || null), counts.individual.map((n) => n || null)],
    }),
  };
}

/** Prompts each endpoint answered per arm (median over rounds, `rows` from endpointRows): a bar each, or over many endpoints their distribution. */
export function loadSpec(rows: readonly EndpointRow[], theme: Theme): ChartSpec {
  return rows.length > MAX_NAMED_ENDPOINTS ? loadDistributionSpec(rows, theme) : namedLoadSpec(rows, theme);
}

function namedLoadSpec(rows: readonly EndpointRow[], theme: Theme): ChartSpec {
  const names = rows.map((r) => r.endpoint);
  const xs = names.map((_, i) => i);
  const rotate = names.length > 6;
  const longest = names.reduce((m, e) => Math.max(m, e.length), 4);
  return {
    key: `load:${names.join(',')}:${rows.map((r) => ARMS.map((a) => r.arms[a]?.prompts ?? 0).join('/')).join(',')}:${theme.key}`,
    label: `Prompts per endpoint for each arm, ${names.length} endpoints`,
    make: () => ({
      opts: {
        height: 200 + (rotate ? Math.min(120, longest * 5) : 0),
        padding: [8, 12, 0, 4],
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: false, range: [-0.5, Math.max(0.5, names.length - 0.5)] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
        axes: [
          axis(theme, {
            grid: { show: false },
            splits: () => xs,
            values: () => names,
            ...(rotate ? { rotate: -40, size: Math.min(140, 16 + longest * 5) } : {}),
          }),
          axis(theme, { size: 44, label: 'prompts', labelSize: 18 }),
        ],
        series: [{ label: 'endpoint', value: (_u, v) => (v === null ? '—' : (names[Math.round(v)] ?? '—')) }, barSeries(theme, 'batched', -1), barSeries(theme, 'individual', 1)],
      },
      data: [xs, rows.map((r) => r.arms.batched?.prompts ?? null), rows.map((r) => r.arms.individual?.prompts ?? null)],
    }),
  };
}

/** Many endpoints: how many answered each number of prompts, per arm (an even spread is one tall bar, a straggler a lone one far right). */
function loadDistributionSpec(rows: readonly EndpointRow[], theme: Theme): ChartSpec {
  const { lo, width, counts } = loadDistribution(rows);
  const centers = lo.map((x) => x + (width - 1) / 2);
  const binText = (v: number) => {
    const i = Math.round((v - (width - 1) / 2 - (lo[0] ?? 0)) / width);
    const from = lo[i];
    return from === undefined ? '—' : width === 1 ? `${from} prompts` : `${from}–${from + width - 1} prompts`;
  };
  return {
    key: `load-dist:${rows.length}:${lo[0]}:${width}:${ARMS.map((a) => counts[a].join(',')).join('/')}:${theme.key}`,
    label: `Endpoints by prompts answered, for each arm: ${rows.length} endpoints`,
    make: () => ({
      opts: {
        height: 200,
        padding: [8, 12, 0, 4],
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: false, range: [(centers[0] ?? 0) - width, (centers[centers.length - 1] ?? 1) + width] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
        axes: [
          axis(theme, { grid: { show: false }, values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : '')), label: 'prompts answered (median round)', labelSize: 18 }),
          axis(theme, { size: 44, label: 'endpoints', labelSize: 18 }),
        ],
        series: [{ label: 'load', value: (_u, v) => (v === null ? '—' : binText(v)) }, barSeries(theme, 'batched', -1), barSeries(theme, 'individual', 1)],
      },
      data: [centers, counts.batched.length ? counts.batched.map((n) => n || null) : centers.map(() => null), counts.individual.length ? counts.individual.map((n) => n || null) : centers.map(() => null)],
    }),
  };
}

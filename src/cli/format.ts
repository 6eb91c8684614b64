import { latencyStats, percentile, summaryRows, type EndpointSummary, type PromptResult, type RunSummary } from '../core/index.ts';

/** What one arm of a comparison sent over all its rounds (the core's `armRequests`). */
type ArmSent = { total: number; byPath: Record<string, number> };

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** `1 prompt`, `2,000 prompts`. */
export function count(n: number, noun: string): string {
  return `${int(n)} ${noun}${n === 1 ? '' : 's'}`;
}

/** Longest line shown whole: a message naming every endpoint of a big swarm is cut. */
const LINE_CHARS = 600;

/**
 * Characters a terminal acts on instead of showing: C0 controls but newline and tab (ESC starts
 * sequences that set the window title, colours, erase lines), DEL, C1 controls (0x9b is a one-byte
 * CSI), and the bidi overrides and isolates that make text read other than it is.
 */
const CONTROLS = /[\0-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from a server or an input file made safe for a terminal, whole: the one escaping every
 * command uses. Each control character becomes an escape (`\x1b`, `\u202e`); newlines and tabs
 * stay. `json`: the text is JSON (a row, an outcome), and the escapes are JSON's own (`\u001b`), so
 * it parses to the same value.
 */
export function terminalSafe(text: string, json = false): string {
  return text.replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    return json || code >= 0x100 ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`;
  });
}

/** A message for the user (quoting input or a server): terminal-safe, each line cut at 600 characters. */
export function printable(text: string): string {
  return terminalSafe(
    text
      .split('\n')
      .map((line) => (line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS)}… (${int(line.length)} characters)` : line))
      .join('\n'),
  );
}

/** Above this many endpoints the summary gives the distribution and the failing ones, not a line each. */
const ENDPOINT_LINES = 12;

/** The run's summary; with its results, a big swarm's slowest endpoints are named too. */
export function formatSummary(s: RunSummary, results: readonly PromptResult[] = []): string {
  // The model's name is the server's (GET /v1/models): anything may be in it.
  const head = `${s.pattern} · ${s.mode}${s.model ? ` · ${printable(s.model)}` : ''}`;
  const rows = summaryRows(s);
  const width = rows.reduce((m, [k]) => Math.max(m, k.length), 0);
  return [head, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), ...perEndpoint(s.endpoints, results)].join('\n');
}

function perEndpoint(endpoints: readonly EndpointSummary[], results: readonly PromptResult[]): string[] {
  const line = (e: EndpointSummary) => `  ${e.endpoint}  ${count(e.prompts, 'prompt')} · ${count(e.requests, 'request')}${e.failed ? ` · ${int(e.failed)} failed` : ''}`;
  if (!endpoints.length) return [];
  if (endpoints.length <= ENDPOINT_LINES) return ['per endpoint:', ...endpoints.map(line)];
  const spread = (pick: (e: EndpointSummary) => number) => {
    const sorted = endpoints.map(pick).sort((a, b) => a - b);
    return `min ${int(sorted[0]!)} · median ${int(percentile(sorted, 50))} · max ${int(sorted.at(-1)!)}`;
  };
  const failing = endpoints.filter((e) => e.failed).sort((a, b) => b.failed - a.failed);
  return [
    `per endpoint (${int(endpoints.length)} endpoints):`,
    `  prompts   ${spread((e) => e.prompts)}`,
    `  requests  ${spread((e) => e.requests)}`,
    ...slowest(results),
    ...(failing.length ? [`  ${count(failing.length, 'endpoint')} with failures${failing.length > 5 ? ', the worst 5' : ''}:`, ...failing.slice(0, 5).map(line)] : []),
  ];
}

/** The five endpoints with the highest median E2EL over their successful prompts. */
function slowest(results: readonly PromptResult[]): string[] {
  const latencies = new Map<string, number[]>();
  for (const r of results) {
    if (r.status !== 'ok' || !r.endpoint || r.timings.sentMs === null) continue;
    const list = latencies.get(r.endpoint) ?? [];
    list.push(r.timings.doneMs - r.timings.sentMs);
    latencies.set(r.endpoint, list);
  }
  const medians = [...latencies].map(([endpoint, ms]) => ({ endpoint, ms: latencyStats(ms)!.medianMs })).sort((a, b) => b.ms - a.ms);
  if (!medians.length) return [];
  const spread = medians.map((m) => m.ms).sort((a, b) => a - b);
  return [
    `  E2EL median per endpoint  min ${int(spread[0]!)} ms · median ${int(percentile(spread, 50))} ms · max ${int(spread.at(-1)!)} ms; slowest:`,
    ...medians.slice(0, 5).map((m) => `  ${m.endpoint}  ${int(m.ms)} ms`),
  ];
}

/**
 * Two arms side by side (each arm's median round); `times` is how many times faster the first arm was
 * (the core's `speedup`); `sent` what each arm sent over all its rounds, preparation included.
 */
export function formatComparison(a: RunSummary, b: RunSummary, labels: [string, string], times: number, sent: [ArmSent, ArmSent]): string {
  const ra = summaryRows(a);
  const rb = summaryRows(b);
  const w0 = ra.reduce((m, [k]) => Math.max(m, k.length), 0);
  const w1 = Math.max(labels[0].length, ...ra.map(([, v]) => v.length));
  const lines = [`  ${''.padEnd(w0)}  ${labels[0].padEnd(w1)}  ${labels[1]}`];
  ra.forEach(([k, v], i) => lines.push(`  ${k.padEnd(w0)}  ${v.padEnd(w1)}  ${rb[i]![1]}`));
  lines.push('');
  const [sa, sb] = sent;
  const paths = (s: ArmSent) => Object.entries(s.byPath).map(([path, n]) => `${path} ${int(n)}`).join(' · ');
  lines.push(`  over all rounds ${labels[0]} sent ${int(sa.total)} HTTP requests (${paths(sa)}) where ${labels[1]} sent ${int(sb.total)} (${paths(sb)}): ${(sb.total / Math.max(1, sa.total)).toFixed(1)}× fewer`);
  lines.push(`  ${labels[0]} took ${(1 / times).toFixed(2)}× the wall time of ${labels[1]} (${times.toFixed(2)}× speed-up, median wall times)`);
  return lines.join('\n');
}

/** Rows of cells as aligned columns, two spaces apart, one line each (the first row is the header). */
export function columns(rows: ReadonlyArray<readonly string[]>): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((row) => row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

import type { RunSummary } from '../core/index.ts';

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 3 : 1)} s`;
const ms = (v: number) => `${v < 10 ? v.toFixed(1) : int(v)} ms`;
const rate = (n: number | null, unit: string) => (n === null ? 'n/a' : `${n < 10 ? n.toFixed(2) : int(n)} ${unit}/s`);

/** The rows of a summary, label → value, in vLLM-bench vocabulary. */
export function summaryRows(s: RunSummary): Array<[string, string]> {
  return [
    ['prompts', `${int(s.ok)} ok · ${int(s.failed)} failed · ${int(s.cancelled)} cancelled`],
    ['wall time', secs(s.wallMs)],
    ['HTTP requests', int(s.httpRequests)],
    ['request throughput', rate(s.requestThroughput, 'req')],
    ['prompt throughput', rate(s.promptThroughput, 'prompts')],
    ['output tokens', s.completionTokens === null ? 'n/a (no usage reported)' : int(s.completionTokens)],
    ['output token throughput', rate(s.outputTokenThroughput, 'tok')],
    ['E2EL mean', s.e2el ? ms(s.e2el.meanMs) : 'n/a'],
    ['E2EL median', s.e2el ? ms(s.e2el.medianMs) : 'n/a'],
    ['E2EL p99', s.e2el ? ms(s.e2el.p99Ms) : 'n/a'],
  ];
}

export function formatSummary(s: RunSummary): string {
  const head = `${s.pattern} · ${s.mode}${s.model ? ` · ${s.model}` : ''}`;
  const rows = summaryRows(s);
  const width = Math.max(...rows.map(([k]) => k.length));
  const endpoints = s.endpoints.map((e) => `  ${e.endpoint}  ${int(e.prompts)} prompts · ${int(e.requests)} requests${e.failed ? ` · ${int(e.failed)} failed` : ''}`);
  return [head, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), 'per endpoint:', ...endpoints].join('\n');
}

/** Two summaries side by side (batched vs individual), with the ratios that matter. */
export function formatComparison(a: RunSummary, b: RunSummary, labels: [string, string]): string {
  const ra = summaryRows(a);
  const rb = summaryRows(b);
  const w0 = Math.max(...ra.map(([k]) => k.length));
  const w1 = Math.max(labels[0].length, ...ra.map(([, v]) => v.length));
  const lines = [`  ${''.padEnd(w0)}  ${labels[0].padEnd(w1)}  ${labels[1]}`];
  ra.forEach(([k, v], i) => lines.push(`  ${k.padEnd(w0)}  ${v.padEnd(w1)}  ${rb[i]![1]}`));
  lines.push('');
  lines.push(`  ${labels[0]} sent ${int(a.httpRequests)} HTTP requests where ${labels[1]} sent ${int(b.httpRequests)} (${(b.httpRequests / Math.max(1, a.httpRequests)).toFixed(1)}× fewer)`);
  lines.push(`  ${labels[0]} took ${(a.wallMs / b.wallMs).toFixed(2)}× the wall time of ${labels[1]} (${(b.wallMs / a.wallMs).toFixed(2)}× speed-up)`);
  return lines.join('\n');
}

import { summaryRows, type RunSummary } from '../core/index.ts';

const int = (n: number) => Math.round(n).toLocaleString('en-US');

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

/** Number and time formats of the panel (vLLM-bench units). Pure. */
const intFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export const int = (n: number) => intFmt.format(Math.round(n));

export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  if (v >= 10_000) return `${(v / 1000).toFixed(1)} s`;
  if (v >= 1_000) return `${(v / 1000).toFixed(2)} s`;
  // Below a millisecond, two significant digits: "0.0 ms" said nothing of a value of 0.04 ms.
  if (v > 0 && v < 0.001) return '< 0.001 ms';
  if (v > 0 && v < 1) return `${Number(v.toPrecision(2))} ms`;
  return `${v < 10 ? v.toFixed(1) : int(v)} ms`;
}

export function rate(v: number | null | undefined, unit: string): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : int(v)} ${unit}`;
}

export function figure(v: number | null | undefined, unit: 'ms' | 'count' | 'rate'): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  if (unit === 'ms') return ms(v);
  if (unit === 'rate') return rate(v, '/s');
  return Number.isInteger(v) ? int(v) : v.toFixed(1);
}

export function when(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** One line of a long text for a table cell: whitespace folded, cut (the cell's ellipsis does the rest). */
export function oneLine(text: string, max = 240): string {
  return (text.length > max * 2 ? text.slice(0, max * 2) : text).replace(/\s+/g, ' ').trim().slice(0, max);
}

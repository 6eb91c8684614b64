/**
 * The rows of the run on show, by input index, and the filtered view of them the table draws.
 * Pure: no DOM, so node tests it.
 */
import { promptLatencies } from '../../src/core/run/summary.ts';
import type { ResultRow } from '../../src/panel/protocol.ts';
import { naturalOrder } from '../../src/core/endpoints/natural-order.ts';

export type FilterMode = 'all' | 'failures' | 'ok';

/** Columns the table sorts by ('' : input order). */
export type SortKey = '' | 'latency' | 'ttft' | 'tpot' | 'tokens' | 'status' | 'endpoint';

export interface ResultFilter {
  mode: FilterMode;
  search: string;
  regex: boolean;
  /** Rows from endpoints whose host:port contains this (case-insensitive); '' for every endpoint. */
  endpoint: string;
  sort: SortKey;
  desc: boolean;
}

export const noFilter = (): ResultFilter => ({ mode: 'all', search: '', regex: false, endpoint: '', sort: '', desc: false });

const STATUS_ORDER = { failed: 0, cancelled: 1, ok: 2 } as const;

/** A row's value in a sort column; pending rows (undefined) sort last either way. */
function sortValue(r: ResultRow, key: Exclude<SortKey, ''>): number | string {
  switch (key) {
    case 'latency':
      return latencyMs(r) ?? Infinity;
    case 'ttft':
      return promptLatencies(r).ttft ?? Infinity;
    case 'tpot':
      return promptLatencies(r).tpot ?? Infinity;
    case 'tokens':
      return r.completionTokens ?? -1;
    case 'status':
      return STATUS_ORDER[r.status];
    case 'endpoint':
      return r.endpoint ?? '';
  }
}

export const latencyMs = (r: ResultRow): number | null => (r.timings.sentMs === null ? null : r.timings.doneMs - r.timings.sentMs);

/** The matcher of a search box: text (case-insensitive) or a regular expression; `error` when the regex is bad. */
export function searchMatcher(search: string, regex: boolean): { test: ((s: string) => boolean) | null; error: string | null } {
  if (!search) return { test: null, error: null };
  if (regex) {
    try {
      const re = new RegExp(search, 'i');
      return { test: (s) => re.test(s), error: null };
    } catch (err) {
      return { test: null, error: (err as Error).message };
    }
  }
  const needle = search.toLowerCase();
  return { test: (s) => s.toLowerCase().includes(needle), error: null };
}

export function isFiltered(f: ResultFilter): boolean {
  return f.mode !== 'all' || f.search !== '' || f.endpoint !== '';
}

/** One clock for every store's version: a new store (another arm's rows, say) never repeats the version of the one it replaces. */
let versionClock = 0;

export class ResultsStore {
  /** By input index; holes are prompts still pending. */
  rows: Array<ResultRow | undefined> = [];
  /** Prompts by input index as the run announced them, so pending rows show theirs. */
  prompts: readonly string[] = [];
  total = 0;
  received = 0;
  /** Rows that came cut (see RowCut): the page asks for them whole when it needs them. */
  cut = 0;
  /** Rows received, by status (a cancelled prompt came back, but was never answered). */
  readonly statusCounts = { ok: 0, failed: 0, cancelled: 0 };
  /** Changes on every change (and differs from every other store's), so views know when to redraw. */
  version = ++versionClock;
  private endpointSet = new Set<string>();
  /** The endpoints sorted, until one more comes. */
  private sortedEndpoints: string[] | null = null;
  private view: Int32Array | null = null;
  private viewKey = '';

  reset(total: number, rows: readonly ResultRow[] = [], prompts: readonly string[] = []): void {
    this.rows = [];
    this.prompts = prompts;
    this.total = total;
    this.received = 0;
    this.cut = 0;
    Object.assign(this.statusCounts, { ok: 0, failed: 0, cancelled: 0 });
    this.endpointSet.clear();
    this.sortedEndpoints = null;
    this.add(rows);
    this.version = ++versionClock;
    this.view = null;
  }

  add(rows: readonly ResultRow[]): void {
    for (const r of rows) {
      const had = this.rows[r.index];
      if (had === undefined) this.received++;
      else {
        this.statusCounts[had.status]--;
        if (had.cut) this.cut--;
      }
      // A live row leaves out the prompt the run announced.
      if (!r.prompt && this.prompts[r.index]) r.prompt = this.prompts[r.index]!;
      if (r.cut) this.cut++;
      this.statusCounts[r.status]++;
      this.rows[r.index] = r;
      if (r.endpoint && !this.endpointSet.has(r.endpoint)) {
        this.endpointSet.add(r.endpoint);
        this.sortedEndpoints = null;
      }
    }
    if (rows.length) {
      this.version = ++versionClock;
      this.view = null;
    }
  }

  setTotal(total: number): void {
    if (total !== this.total) {
      this.total = total;
      this.version = ++versionClock;
      this.view = null;
    }
  }

  private sortView(view: Int32Array, key: Exclude<SortKey, ''>, desc: boolean): void {
    const values = new Map<number, number | string>();
    for (const i of view) {
      const r = this.rows[i];
      if (r) values.set(i, sortValue(r, key));
    }
    const dir = desc ? -1 : 1;
    view.sort((a, b) => {
      const [va, vb] = [values.get(a), values.get(b)];
      if (va === undefined || vb === undefined) return va === vb ? a - b : va === undefined ? 1 : -1;
      const c = typeof va === 'number' && typeof vb === 'number' ? va - vb : naturalOrder(String(va), String(vb));
      return c ? c * dir : a - b; // ties keep input order
    });
  }

  /** Rows the unfiltered table has: every prompt, done or pending. */
  get length(): number {
    return Math.max(this.total, this.rows.length);
  }

  /** Every endpoint a row came from, in natural order; the same array until another endpoint comes. */
  endpoints(): readonly string[] {
    return (this.sortedEndpoints ??= [...this.endpointSet].sort(naturalOrder));
  }

  all(): ResultRow[] {
    return this.rows.filter((r): r is ResultRow => r !== undefined);
  }

  /**
   * The input indexes the filter keeps, in input order or the sort's; null means every row in input
   * order (no filter, no sort: pending rows show too). Cached until the rows or the filter change.
   */
  filtered(f: ResultFilter): { view: Int32Array | null; error: string | null } {
    const { test, error } = searchMatcher(f.search, f.regex);
    const filtering = isFiltered(f) && !(error && f.mode === 'all' && !f.endpoint);
    if (!filtering && !f.sort) return { view: null, error };
    const key = `${this.version}\u0000${f.mode}\u0000${f.search}\u0000${f.regex}\u0000${f.endpoint}\u0000${f.sort}\u0000${f.desc}`;
    if (this.view && this.viewKey === key) return { view: this.view, error };
    const length = filtering ? this.rows.length : this.length;
    const endpointPart = f.endpoint.toLowerCase();
    const out = new Int32Array(length);
    let n = 0;
    for (let i = 0; i < length; i++) {
      const r = this.rows[i];
      if (!filtering) {
        out[n++] = i;
        continue;
      }
      if (!r) continue;
      if (f.mode === 'failures' && r.status === 'ok') continue;
      if (f.mode === 'ok' && r.status !== 'ok') continue;
      if (endpointPart && !r.endpoint?.toLowerCase().includes(endpointPart)) continue;
      if (test && !(test(r.prompt) || test(r.text) || (r.error !== null && test(r.error)))) continue;
      out[n++] = i;
    }
    this.view = out.subarray(0, n);
    if (f.sort) this.sortView(this.view, f.sort, f.desc);
    this.viewKey = key;
    return { view: this.view, error };
  }
}

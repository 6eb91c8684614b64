/**
 * The rows of the run on show, by input index, and the filtered view of them the table draws.
 * Pure: no DOM, so node tests it.
 */
import type { ResultRow } from '../../src/panel/protocol.ts';

export type FilterMode = 'all' | 'failures' | 'ok';

export interface ResultFilter {
  mode: FilterMode;
  search: string;
  regex: boolean;
  /** '' for every endpoint. */
  endpoint: string;
}

export const noFilter = (): ResultFilter => ({ mode: 'all', search: '', regex: false, endpoint: '' });

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

export class ResultsStore {
  /** By input index; holes are prompts still pending. */
  rows: Array<ResultRow | undefined> = [];
  /** Prompts by input index as the run announced them, so pending rows show theirs. */
  prompts: readonly string[] = [];
  total = 0;
  received = 0;
  /** Rows received, by status (a cancelled prompt came back, but was never answered). */
  readonly statusCounts = { ok: 0, failed: 0, cancelled: 0 };
  /** Bumped on every change, so views know when to redraw. */
  version = 0;
  private endpointSet = new Set<string>();
  private view: Int32Array | null = null;
  private viewKey = '';

  reset(total: number, rows: readonly ResultRow[] = [], prompts: readonly string[] = []): void {
    this.rows = [];
    this.prompts = prompts;
    this.total = total;
    this.received = 0;
    Object.assign(this.statusCounts, { ok: 0, failed: 0, cancelled: 0 });
    this.endpointSet.clear();
    this.add(rows);
    this.version++;
    this.view = null;
  }

  add(rows: readonly ResultRow[]): void {
    for (const r of rows) {
      const had = this.rows[r.index];
      if (had === undefined) this.received++;
      else this.statusCounts[had.status]--;
      this.statusCounts[r.status]++;
      this.rows[r.index] = r;
      if (r.endpoint) this.endpointSet.add(r.endpoint);
    }
    if (rows.length) {
      this.version++;
      this.view = null;
    }
  }

  setTotal(total: number): void {
    if (total !== this.total) {
      this.total = total;
      this.version++;
      this.view = null;
    }
  }

  /** Rows the unfiltered table has: every prompt, done or pending. */
  get length(): number {
    return Math.max(this.total, this.rows.length);
  }

  /** Rows that got an answer or a failure: every row received but the cancelled ones. */
  get answered(): number {
    return this.received - this.statusCounts.cancelled;
  }

  endpoints(): string[] {
    return [...this.endpointSet].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  }

  all(): ResultRow[] {
    return this.rows.filter((r): r is ResultRow => r !== undefined);
  }

  /**
   * The input indexes the filter keeps, in input order; null means every row (no filter: pending
   * rows show too). Cached until the rows or the filter change.
   */
  filtered(f: ResultFilter): { view: Int32Array | null; error: string | null } {
    const { test, error } = searchMatcher(f.search, f.regex);
    if (!isFiltered(f) || (error && f.mode === 'all' && !f.endpoint)) return { view: null, error };
    const key = `${this.version}\u0000${f.mode}\u0000${f.search}\u0000${f.regex}\u0000${f.endpoint}`;
    if (this.view && this.viewKey === key) return { view: this.view, error };
    const out = new Int32Array(this.rows.length);
    let n = 0;
    for (let i = 0; i < this.rows.length; i++) {
      const r = this.rows[i];
      if (!r) continue;
      if (f.mode === 'failures' && r.status === 'ok') continue;
      if (f.mode === 'ok' && r.status !== 'ok') continue;
      if (f.endpoint && r.endpoint !== f.endpoint) continue;
      if (test && !(test(r.prompt) || test(r.text) || (r.error !== null && test(r.error)))) continue;
      out[n++] = i;
    }
    this.view = out.subarray(0, n);
    this.viewKey = key;
    return { view: this.view, error };
  }
}

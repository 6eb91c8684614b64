/**
 * How result rows cross to the webview: as JSONL, one row a line (a string crosses each hop to the
 * page whole, where row objects were copied field by field), and how either side reads them back,
 * each row checked before the page files it by its index.
 */
import type { PromptResult, PromptTimings } from '../core/run/result.ts';
import type { ResultRow, RowCut } from './protocol.ts';

/** The keys of T whose value may be null. */
type NullableKeys<T> = { [K in keyof T]-?: null extends T[K] ? K : never }[keyof T];
/**
 * Every field a row may hold null in (the type checks the list is whole): a light row leaves them
 * out, and reading a row puts them back.
 */
const ROW_NULLS = { reasoning: null, error: null, endpoint: null, finishReason: null, promptTokens: null, completionTokens: null } satisfies Record<NullableKeys<PromptResult>, null>;
const TIMING_NULLS = { sentMs: null, firstByteMs: null, firstTokenMs: null } satisfies Record<NullableKeys<PromptTimings>, null>;

/** Rows as JSONL, one a line: how rows cross to the webview (runProgress, runFinished, OpenedRun). */
export function rowsJsonl(rows: readonly ResultRow[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n');
}

/** A live row's answer (and reasoning) is cut to this many characters: more than the table's line shows. */
export const PREVIEW_CHARS = 120;

/**
 * A row as runProgress carries it: its answer and reasoning cut to their first PREVIEW_CHARS, its
 * choices and embedding left out (each said in `cut`), its prompt left out when `prompts` (what
 * runStarted listed) holds the same one, its input fields when it has none, its null fields, and
 * `ok` (the status says it): about 330 bytes for a row whose answer is cut.
 */
export function lightRow(row: ResultRow, prompts: readonly string[] | undefined): Partial<ResultRow> {
  const { prompt, input, texts, embedding, ...light } = row as ResultRow & { cut?: RowCut };
  const cut: RowCut = {};
  const out: Partial<ResultRow> = light;
  if (row.text.length > PREVIEW_CHARS) {
    out.text = row.text.slice(0, PREVIEW_CHARS);
    cut.text = row.text.length;
  }
  if (row.reasoning && row.reasoning.length > PREVIEW_CHARS) {
    out.reasoning = row.reasoning.slice(0, PREVIEW_CHARS);
    cut.reasoning = row.reasoning.length;
  }
  if (texts) cut.texts = texts.length;
  if (embedding) cut.embedding = embedding.length;
  if (prompts?.[row.index] !== prompt) out.prompt = prompt;
  if (input && Object.keys(input).length) out.input = input;
  if (Object.keys(cut).length) out.cut = cut;
  // What reading puts back: null fields, and `ok` (whether the status is ok).
  for (const k of Object.keys(ROW_NULLS) as Array<keyof typeof ROW_NULLS>) if (out[k] === null) delete out[k];
  out.timings = { ...row.timings };
  for (const k of Object.keys(TIMING_NULLS) as Array<keyof typeof TIMING_NULLS>) if (out.timings[k] === null) delete out.timings[k];
  if (row.ok === (row.status === 'ok')) delete out.ok;
  return out;
}

/** Live rows as JSONL (lightRow each). */
export function lightRowsJsonl(rows: readonly ResultRow[], prompts: readonly string[] | undefined): string {
  return rows.map((r) => JSON.stringify(lightRow(r, prompts))).join('\n');
}

const ROW_STATUSES: ReadonlySet<unknown> = new Set(['ok', 'failed', 'cancelled'] satisfies Array<ResultRow['status']>);

/**
 * One line of rows' JSONL, checked before the page files it by its index: an object with a
 * non-negative integer `index` and a known `status`; a row without its prompt (a results file of the
 * CLI's, a live row whose prompt runStarted listed) gets '', without input fields {}, and what else a
 * light row left out is put back. Throws on anything else (a row without timings too).
 */
export function parseResultRow(line: string): ResultRow {
  const row: unknown = JSON.parse(line);
  if (typeof row !== 'object' || row === null || Array.isArray(row)) throw new Error('a result row is not an object');
  const r = row as ResultRow;
  if (!Number.isSafeInteger(r.index) || r.index < 0) throw new Error(`a result row's index is not a whole number: ${String(r.index).slice(0, 40)}`);
  if (!ROW_STATUSES.has(r.status)) throw new Error(`result row ${r.index}: unknown status ${String(r.status).slice(0, 40)}`);
  if (typeof r.prompt !== 'string') r.prompt = '';
  if (typeof r.text !== 'string') r.text = '';
  if (typeof r.input !== 'object' || r.input === null) r.input = {};
  // What a light row leaves out (lightRow).
  if (typeof r.ok !== 'boolean') r.ok = r.status === 'ok';
  for (const k of Object.keys(ROW_NULLS) as Array<keyof typeof ROW_NULLS>) if (r[k] === undefined) r[k] = null;
  if (typeof r.timings !== 'object' || r.timings === null) throw new Error(`result row ${r.index}: no timings`);
  for (const k of Object.keys(TIMING_NULLS) as Array<keyof typeof TIMING_NULLS>) if (r.timings[k] === undefined) r.timings[k] = null;
  return r;
}

/** Rows from JSONL (a results file, or what openRun, showRun and runFinished carry), each checked (parseResultRow). */
export function parseRows(jsonl: string): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const line of jsonl.split('\n')) if (line.trim()) rows.push(parseResultRow(line));
  return rows;
}

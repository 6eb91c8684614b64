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
 * A row as runProgress carries it: its answer and reasoning cut to their first `previewChars` (0: none of them), its
 * choices and embedding left out (each said in `cut`), its prompt left out when `prompts` (what
 * runStarted listed) holds the same one, its input fields when it has none, its null fields, and
 * `ok` (the status says it): about 330 bytes for a row whose answer is cut.
 */
export function lightRow(row: ResultRow, prompts: readonly string[] | undefined, previewChars = PREVIEW_CHARS): Partial<ResultRow> {
  const { prompt, input, texts, embedding, ...light } = row as ResultRow & { cut?: RowCut };
  const cut: RowCut = {};
  const out: Partial<ResultRow> = light;
  if (row.text.length > previewChars) {
    out.text = row.text.slice(0, previewChars);
    cut.text = row.text.length;
  }
  if (row.reasoning && row.reasoning.length > previewChars) {
    out.reasoning = row.reasoning.slice(0, previewChars);
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

/**
 * A light row's line: its fields every row has, by position (their names are most of a row's bytes
 * once its answer is cut), then its timings by position, then, as an object, whatever else it holds.
 */
const LINE_FIELDS = ['index', 'status', 'text', 'endpoint', 'finishReason', 'promptTokens', 'completionTokens', 'attempts'] as const satisfies ReadonlyArray<keyof PromptResult>;
const LINE_TIMINGS = ['queuedMs', 'sentMs', 'firstByteMs', 'firstTokenMs', 'doneMs'] as const satisfies ReadonlyArray<keyof PromptTimings>;

/** Live rows as JSONL: lightRow each, as a line of positions (LINE_FIELDS); parseResultRow reads both forms. */
export function lightRowsJsonl(rows: readonly ResultRow[], prompts: readonly string[] | undefined, previewChars = PREVIEW_CHARS): string {
  return rows
    .map((r) => {
      const rest = lightRow(r, prompts, previewChars) as Partial<ResultRow> & Record<string, unknown>;
      delete rest.timings;
      const line: unknown[] = LINE_FIELDS.map((k) => {
        const v = rest[k] ?? null;
        delete rest[k];
        return v;
      });
      line.push(LINE_TIMINGS.map((k) => r.timings[k]));
      if (Object.keys(rest).length) line.push(rest);
      return JSON.stringify(line);
    })
    .join('\n');
}

/** A light row's line (lightRowsJsonl) as the row object it stands for, still to be checked. */
function fromLine(line: unknown[]): unknown {
  const [timings, rest] = [line[LINE_FIELDS.length], line[LINE_FIELDS.length + 1]];
  if (!Array.isArray(timings)) throw new Error('a result row in positions has no timings');
  const row: Record<string, unknown> = typeof rest === 'object' && rest !== null && !Array.isArray(rest) ? { ...rest } : {};
  LINE_FIELDS.forEach((k, i) => (row[k] = line[i]));
  row.timings = Object.fromEntries(LINE_TIMINGS.map((k, i) => [k, timings[i] ?? null]));
  return row;
}

const ROW_STATUSES: ReadonlySet<unknown> = new Set(['ok', 'failed', 'cancelled'] satisfies Array<ResultRow['status']>);

/**
 * One line of rows' JSONL (a row object, or a light row's positions), checked before the page files it by its index: an object with a
 * non-negative integer `index` and a known `status`; a row without its prompt (a results file of the
 * CLI's, a live row whose prompt runStarted listed) gets '', without input fields {}, and what else a
 * light row left out is put back. Throws on anything else (a row without timings too).
 */
export function parseResultRow(line: string): ResultRow {
  const parsed: unknown = JSON.parse(line);
  const row = Array.isArray(parsed) ? fromLine(parsed) : parsed;
  if (typeof row !== 'object' || row === null) throw new Error('a result row is not an object');
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

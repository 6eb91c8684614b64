/**
 * How result rows cross to the webview: as JSONL, one row a line (a string crosses each hop to the
 * page whole, where row objects were copied field by field), and how either side reads them back,
 * each row checked before the page files it by its index.
 */
import type { ResultRow, RowCut } from './protocol.ts';

/** Rows as JSONL, one a line: how rows cross to the webview (runProgress, runFinished, OpenedRun). */
export function rowsJsonl(rows: readonly ResultRow[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n');
}

/** A live row's answer (and reasoning) is cut to this many characters: more than the table's line shows. */
export const PREVIEW_CHARS = 120;

/**
 * A row as runProgress carries it: its answer and reasoning cut to their first PREVIEW_CHARS, its
 * choices and embedding left out (each said in `cut`), its prompt left out when `prompts` (what
 * runStarted listed) holds the same one, and its input fields when it has none.
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
 * CLI's, a live row whose prompt runStarted listed) gets '', without input fields {}. Throws on anything else.
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
  return r;
}

/** Rows from JSONL (a results file, or what openRun, showRun and runFinished carry), each checked (parseResultRow). */
export function parseRows(jsonl: string): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const line of jsonl.split('\n')) if (line.trim()) rows.push(parseResultRow(line));
  return rows;
}

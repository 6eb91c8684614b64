/**
 * Prompt files the host hands over (`importFile`): JSONL (`{"prompt": …}` per line, the core's
 * format; other fields go to `input`), CSV/TSV (a column chooser picks the prompt column, the other
 * columns go to `input`) and plain text (one prompt per non-blank line). Pure: no DOM, so node tests it.
 */
import Papa from 'papaparse';
import type { PromptRow } from '../../src/panel/protocol.ts';

/** A file that needs a column choice: its columns and records, and the column we would pick. */
export interface ImportTable {
  kind: 'table';
  name: string;
  columns: string[];
  records: Array<Record<string, unknown>>;
  suggested: string;
  warnings: string[];
}

export interface ImportRows {
  kind: 'rows';
  name: string;
  rows: PromptRow[];
  warnings: string[];
}

export type ImportResult = ImportRows | ImportTable;

const PREFERRED = ['prompt', 'query', 'question', 'text', 'input', 'instruction'];

export function suggestColumn(columns: readonly string[]): string {
  for (const want of PREFERRED) {
    const hit = columns.find((c) => c.trim().toLowerCase() === want);
    if (hit !== undefined) return hit;
  }
  return columns[0] ?? '';
}

const extension = (name: string) => /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? '';

export function parsePromptFile(name: string, raw: string): ImportResult {
  const text = raw.replace(/^\uFEFF/, '');
  const ext = extension(name);
  if (ext === 'csv' || ext === 'tsv') return parseDelimited(name, text, ext === 'tsv' ? '\t' : '');
  const first = text.split(/\r?\n/).find((l) => l.trim())?.trim() ?? '';
  if (ext === 'jsonl' || ext === 'ndjson' || ext === 'json' || first.startsWith('{')) return parseJsonl(name, text);
  const rows: PromptRow[] = [];
  for (const line of text.split(/\r?\n/)) if (line.trim()) rows.push({ prompt: line });
  return { kind: 'rows', name, rows, warnings: rows.length ? [] : [`${name}: no prompts`] };
}

function parseDelimited(name: string, text: string, delimiter: string): ImportResult {
  const parsed = Papa.parse<Record<string, unknown>>(text, { header: true, skipEmptyLines: 'greedy', delimiter });
  const columns = (parsed.meta.fields ?? []).filter((c) => c !== '');
  const warnings = parsed.errors.slice(0, 5).map((e) => `${name}${e.row === undefined ? '' : `:${e.row + 2}`}: ${e.message}`);
  if (parsed.errors.length > 5) warnings.push(`… ${parsed.errors.length - 5} more`);
  return { kind: 'table', name, columns, records: parsed.data, suggested: suggestColumn(columns), warnings };
}

function parseJsonl(name: string, text: string): ImportResult {
  const trimmed = text.trim();
  const warnings: string[] = [];
  let values: unknown[] = [];
  if (trimmed.startsWith('[')) {
    try {
      const all = JSON.parse(trimmed) as unknown;
      if (Array.isArray(all)) values = all;
    } catch (err) {
      warnings.push(`${name}: not valid JSON (${(err as Error).message})`);
    }
  } else {
    text.split(/\r?\n/).forEach((line, i) => {
      if (!line.trim()) return;
      try {
        values.push(JSON.parse(line));
      } catch (err) {
        warnings.push(`${name}:${i + 1}: not valid JSON (${(err as Error).message})`);
      }
    });
  }
  const rows: PromptRow[] = [];
  const records: Array<Record<string, unknown>> = [];
  let objects = true;
  for (const v of values) {
    if (typeof v === 'string') rows.push({ prompt: v });
    else if (typeof v === 'object' && v !== null && !Array.isArray(v)) records.push(v as Record<string, unknown>);
    else objects = false;
  }
  if (!objects) warnings.push(`${name}: some lines are neither a string nor a JSON object; they were skipped`);
  if (records.length && records.every((r) => typeof r.prompt === 'string')) {
    for (const r of records) {
      const { prompt, ...input } = r;
      rows.push({ prompt: prompt as string, input });
    }
    return { kind: 'rows', name, rows, warnings };
  }
  if (records.length) {
    const columns = [...new Set(records.flatMap((r) => Object.keys(r)))];
    return { kind: 'table', name, columns, records, suggested: suggestColumn(columns), warnings };
  }
  if (!rows.length) warnings.push(`${name}: no prompts`);
  return { kind: 'rows', name, rows, warnings };
}

/** The prompt set a column choice makes: the column's text is the prompt, the other columns `input`. */
export function rowsFromTable(records: ReadonlyArray<Record<string, unknown>>, column: string): { rows: PromptRow[]; skipped: number } {
  const rows: PromptRow[] = [];
  let skipped = 0;
  for (const record of records) {
    const value = record[column];
    const prompt = value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
    if (!prompt.trim()) {
      skipped++;
      continue;
    }
    const input: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(record)) if (k !== column && k !== '') input[k] = v;
    rows.push({ prompt, input });
  }
  return { rows, skipped };
}

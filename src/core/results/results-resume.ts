import { closeSync, existsSync, openSync, statSync } from 'node:fs';
import { readLines } from './file-lines.ts';
import { partialPathOf, type Continued, type KeptRow } from './results-file.ts';
import type { PromptInput, PromptList } from '../run/result.ts';

/** A row of an earlier results file, as much as resuming needs of it. */
export interface SavedRow extends KeptRow {
  /** The file and line it was read from, for messages. */
  file: string;
  line: number;
  ok: boolean;
  /** As written (`ok`, `failed`, `cancelled`); null in a row without one. */
  status: string | null;
  prompt: string | null;
  input: Record<string, unknown>;
}

/** What is left to do to complete a results file, and the rows of it that stay. */
export interface ResumePlan<P extends PromptList = PromptInput[]> {
  /** Every prompt of the run, by index. */
  prompts: P;
  /** Indices still to send, in order. */
  todo: number[];
  /** The rows that stay, where they are. */
  continued: Continued & { rows: SavedRow[] };
}

/** The results file cannot be resumed as asked; nothing was written. */
export class ResumeError extends Error {
  override name = 'ResumeError';
}

interface SavedRows {
  /** The latest row of each index. */
  rows: Map<number, SavedRow>;
  finalSize: number;
  partialSize: number;
}

/**
 * Reads a results file and the `.partial` file an unfinished run left beside it, row by row (never
 * whole: they may hold a million answers), keeping each row's place and what resuming needs. The
 * `.partial` rows are the later ones, and a later row of an index replaces an earlier one, as the
 * writer appends. A torn last line (a crash mid-write) is ignored; any other line that is not a
 * result row makes the file something else than a results file, and it is refused. `check` sees
 * every row as it is read, superseded ones too.
 */
export function readSavedRows(path: string, check: (row: SavedRow) => void = () => {}): SavedRows {
  const partial = partialPathOf(path);
  const hasPartial = existsSync(partial);
  if (!existsSync(path) && !hasPartial) throw new ResumeError(`cannot read results ${path}: ENOENT (no such file)`);
  const rows = new Map<number, SavedRow>();
  const add = (row: SavedRow) => {
    check(row);
    rows.set(row.index, row);
  };
  const finalSize = existsSync(path) ? readRows(path, false, add) : 0;
  const partialSize = hasPartial ? readRows(partial, true, add) : 0;
  return { rows, finalSize, partialSize };
}

/** Hands each row of one file to `add`; returns the bytes of its whole lines. */
function readRows(file: string, inPartial: boolean, add: (row: SavedRow) => void): number {
  // Asked first: opening a FIFO (or a terminal) for reading would wait for a writer.
  if (!statSync(file).isFile()) throw new ResumeError(`${file}: not a results file (not a regular file)`);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    throw new ResumeError(`cannot read results ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return readLines(fd, (buf, start, end, offset, line) => {
      if (end > start) add(parseRow(buf.toString('utf8', start, end), { file, line, inPartial, offset, length: end - start }));
    }).size;
  } finally {
    closeSync(fd);
  }
}

function parseRow(text: string, place: Pick<SavedRow, 'file' | 'line' | 'inPartial' | 'offset' | 'length'>): SavedRow {
  const refuse = (why: string) => new ResumeError(`${place.file}:${place.line}: not a result row (${why}); is this a results file?`);
  let row: { index?: unknown; status?: unknown; prompt?: unknown; input?: unknown };
  try {
    row = JSON.parse(text) as typeof row;
  } catch {
    throw refuse('not JSON');
  }
  if (!row || typeof row !== 'object' || Array.isArray(row)) throw refuse('not a JSON object');
  if (!Number.isInteger(row.index) || (row.index as number) < 0) throw refuse('no "index"');
  const input = row.input && typeof row.input === 'object' && !Array.isArray(row.input) ? (row.input as Record<string, unknown>) : {};
  const status = typeof row.status === 'string' ? row.status : null;
  return { ...place, index: row.index as number, ok: status === 'ok', status, prompt: typeof row.prompt === 'string' ? row.prompt : null, input };
}

/**
 * `--resume`: the prompts file is the truth. Every row must be one of its prompts' — the same index,
 * prompt and input — or the file is the results of something else, and is refused untouched. A row
 * that succeeded stays; everything else (failed, cancelled, missing) is sent.
 */
export function planResume<P extends PromptList>(path: string, prompts: P, promptsName = 'the prompts file'): ResumePlan<P> {
  const saved = readSavedRows(path, (row) => {
    const at = `${row.file}:${row.line}`;
    const p = prompts.at(row.index);
    if (!p) throw new ResumeError(`${at}: a row for index ${row.index}, but ${promptsName} has ${count(prompts.length, 'prompt')}: not its results`);
    if (row.prompt === null) throw new ResumeError(`${at}: the row has no "prompt", so it cannot be matched to ${promptsName}`);
    if (row.prompt !== p.prompt) throw new ResumeError(`${at}: the row for index ${row.index} is for ${quote(row.prompt)}, but prompt ${row.index} of ${promptsName} is ${quote(p.prompt)}: not its results`);
    if (canonical(row.input) !== canonical(p.input ?? {})) {
      throw new ResumeError(`${at}: the row for index ${row.index} has input ${cut(JSON.stringify(row.input))}, but prompt ${row.index} of ${promptsName} has ${cut(JSON.stringify(p.input ?? {}))}: not its results`);
    }
  });
  const keep: SavedRow[] = [];
  const todo: number[] = [];
  for (let i = 0; i < prompts.length; i++) {
    const row = saved.rows.get(i);
    if (row?.ok) keep.push(row);
    else todo.push(i);
  }
  return { prompts, todo, continued: { rows: keep, partialSize: saved.partialSize, finalSize: saved.finalSize } };
}

/**
 * `--retry-failed`: the results file is the truth, rows carry their prompts; failed and cancelled
 * rows are sent again (or those `retry` picks: the panel's "Rerun failed" and "Run remaining").
 * The file must hold a row for every index (else there is no knowing the rest).
 */
export function planRetryFailed(path: string, retry: (row: SavedRow) => boolean = (row) => !row.ok): ResumePlan {
  const { rows, finalSize, partialSize } = readSavedRows(path);
  if (!rows.size) throw new ResumeError(`${path}: no result rows`);
  const prompts: PromptInput[] = new Array(rows.size);
  const keep: SavedRow[] = [];
  const todo: number[] = [];
  for (let i = 0; i < rows.size; i++) {
    const row = rows.get(i);
    if (!row) throw new ResumeError(`${path}: no row for prompt ${i} (of ${rows.size}); complete it with --resume and the prompts file`);
    if (row.prompt === null) throw new ResumeError(`${row.file}:${row.line}: the row has no "prompt" (written by an older version?); use --resume with the prompts file`);
    prompts[i] = { prompt: row.prompt, input: row.input };
    if (retry(row)) todo.push(i);
    else keep.push(row);
  }
  return { prompts, todo, continued: { rows: keep, partialSize, finalSize } };
}

const count = (n: number, noun: string) => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;

/** A text in a message, cut at 60 characters. */
const cut = (text: string) => (text.length > 60 ? `${text.slice(0, 60)}…` : text);
const quote = (text: string) => JSON.stringify(cut(text));

/** JSON with object keys sorted: two inputs are the same whatever order their fields were written in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

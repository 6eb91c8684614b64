import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { RowPlace } from './results-file.ts';
import type { PromptInput } from './result.ts';

/** A row of an earlier results file, as much as resuming needs of it. */
export interface SavedRow extends RowPlace {
  ok: boolean;
  /** As written (`ok`, `failed`, `cancelled`); null in a row without one. */
  status: string | null;
  prompt: string | null;
  input: Record<string, unknown>;
}

/** What is left to do to complete a results file, and the rows of it that stay. */
export interface ResumePlan {
  /** Every prompt of the run, by index. */
  prompts: PromptInput[];
  /** Indices still to send, in order. */
  todo: number[];
  keep: SavedRow[];
  size: number;
}

export class ResumeError extends Error {
  override name = 'ResumeError';
}

const CHUNK = 4 << 20;

/**
 * Reads a results file row by row (never whole: it may hold a million answers), keeping each row's
 * place and what resuming needs. A later row of the same index replaces an earlier one, as the
 * writer appends; a torn last line (a crash mid-write) is ignored.
 */
export function readSavedRows(path: string): { rows: Map<number, SavedRow>; size: number } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new ResumeError(`cannot read results ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const rows = new Map<number, SavedRow>();
  try {
    const size = fstatSync(fd).size;
    let carry = Buffer.alloc(0);
    let base = 0; // file offset of carry[0]
    const chunk = Buffer.allocUnsafe(CHUNK);
    for (let pos = 0; pos < size; ) {
      const read = readSync(fd, chunk, 0, CHUNK, pos);
      if (read <= 0) break;
      pos += read;
      const buf = carry.length ? Buffer.concat([carry, chunk.subarray(0, read)]) : chunk.subarray(0, read);
      let start = 0;
      for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
        const row = parseRow(buf.toString('utf8', start, nl), base + start, nl - start);
        if (row) rows.set(row.index, row);
        start = nl + 1;
      }
      carry = Buffer.from(buf.subarray(start));
      base += start;
    }
    return { rows, size };
  } finally {
    closeSync(fd);
  }
}

function parseRow(line: string, offset: number, length: number): SavedRow | null {
  let row: { index?: unknown; status?: unknown; prompt?: unknown; input?: unknown };
  try {
    row = JSON.parse(line) as typeof row;
  } catch {
    return null;
  }
  if (!Number.isInteger(row?.index) || (row.index as number) < 0) return null;
  const input = row.input && typeof row.input === 'object' && !Array.isArray(row.input) ? (row.input as Record<string, unknown>) : {};
  return { index: row.index as number, offset, length, ok: row.status === 'ok', status: typeof row.status === 'string' ? row.status : null, prompt: typeof row.prompt === 'string' ? row.prompt : null, input };
}

/**
 * `--resume`: the prompts file is the truth; a saved row stays when it succeeded for the same prompt
 * at the same index. Everything else (failed, cancelled, missing, or a different prompt) is sent.
 */
export function planResume(path: string, prompts: PromptInput[]): ResumePlan {
  const { rows, size } = readSavedRows(path);
  const keep: SavedRow[] = [];
  const todo: number[] = [];
  for (let i = 0; i < prompts.length; i++) {
    const row = rows.get(i);
    if (row?.ok && row.prompt === prompts[i]!.prompt) keep.push(row);
    else todo.push(i);
  }
  return { prompts, todo, keep, size };
}

/**
 * `--retry-failed`: the results file is the truth, rows carry their prompts; failed and cancelled
 * rows are sent again (or those `retry` picks: the panel's "Rerun failed" and "Run remaining").
 * The file must hold a row for every index (else there is no knowing the rest).
 */
export function planRetryFailed(path: string, retry: (row: SavedRow) => boolean = (row) => !row.ok): ResumePlan {
  const { rows, size } = readSavedRows(path);
  const prompts: PromptInput[] = new Array(rows.size);
  const keep: SavedRow[] = [];
  const todo: number[] = [];
  for (let i = 0; i < rows.size; i++) {
    const row = rows.get(i);
    if (!row) throw new ResumeError(`${path}: no row for prompt ${i} (of ${rows.size}); complete it with --resume and the prompts file`);
    if (row.prompt === null) throw new ResumeError(`${path}:${i}: the row has no "prompt" (written by an older version?); use --resume with the prompts file`);
    prompts[i] = { prompt: row.prompt, input: row.input };
    if (retry(row)) todo.push(i);
    else keep.push(row);
  }
  if (!rows.size) throw new ResumeError(`${path}: no result rows`);
  return { prompts, todo, keep, size };
}

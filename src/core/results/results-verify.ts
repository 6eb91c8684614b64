import { closeSync, openSync } from 'node:fs';
import { giveWay, scanLines } from './file-lines.ts';
import type { RowIndex } from './results-index.ts';

/**
 * Reads a results file back and says what is wrong with it, or null when it holds exactly the rows
 * `rows` records, in index order, each whole: a line of the recorded length that is that index's
 * row. A row this run wrote starts `{"index":N,` and ends `}` (its JSON comes from resultRow, whose
 * output is property-tested to be JSON.stringify's): checking those bytes costs ~0.1 µs a row where
 * parsing would cost ~3 µs (3 s of a million-row run). A row another writer made is parsed.
 * Gives the event loop way after every 4 MiB read.
 */
export async function problemOnDisk(path: string, rows: RowIndex): Promise<string | null> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    return `cannot read it back (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  try {
    let index = nextRow(rows, 0);
    const lines = scanLines(fd, (buf, start, end, _offset, line) => {
      if (index < 0) return `line ${line}: a row more than the ${rows.count.toLocaleString('en-US')} written`;
      const problem = rowProblem(buf.subarray(start, end), index, rows.bytesOf(index) - 1);
      if (problem) return `line ${line}: ${problem}`;
      index = nextRow(rows, index + 1);
    });
    let step = lines.next();
    for (; !step.done; step = lines.next()) await giveWay();
    const read = step.value;
    if (read.stopped) return read.stopped;
    if (read.rest) return `line ${read.lines + 1}: cut short (no newline at the end of the file)`;
    return index < 0 ? null : `the row for index ${index} is missing (${read.lines.toLocaleString('en-US')} lines)`;
  } finally {
    closeSync(fd);
  }
}

function nextRow(rows: RowIndex, from: number): number {
  for (let i = from; i < rows.capacity; i++) if (rows.bytesOf(i)) return i;
  return -1;
}

function rowProblem(bytes: Buffer, index: number, length: number): string | null {
  if (bytes.length !== length) return `${bytes.length} bytes where the row for index ${index} has ${length}`;
  const head = `{"index":${index},`;
  if (bytes.toString('latin1', 0, head.length) === head && bytes[bytes.length - 1] === 0x7d) return null;
  try {
    const row = JSON.parse(bytes.toString('utf8')) as { index?: unknown };
    return row?.index === index ? null : `not the row for index ${index}`;
  } catch {
    return `not JSON where the row for index ${index} should be`;
  }
}

import { closeSync, openSync, readSync } from 'node:fs';
import type { RowIndex } from './results-index.ts';

const CHUNK = 4 << 20;

/**
 * Reads a results file back and says what is wrong with it, or null when it holds exactly the rows
 * `rows` records, in index order, each whole: a line of the recorded length that is that index's
 * row. A row this run wrote starts `{"index":N,` and ends `}` (its JSON comes from resultRow, whose
 * output is property-tested to be JSON.stringify's): checking those bytes costs ~0.1 µs a row where
 * parsing would cost ~3 µs (3 s of a million-row run). A row another writer made is parsed.
 */
export function problemOnDisk(path: string, rows: RowIndex): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    return `cannot read it back (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  try {
    let index = nextRow(rows, 0);
    let line = 0;
    let carry = Buffer.alloc(0);
    const chunk = Buffer.allocUnsafe(CHUNK);
    for (let pos = 0; ; ) {
      const read = readSync(fd, chunk, 0, CHUNK, pos);
      if (read <= 0) break;
      pos += read;
      const buf = carry.length ? Buffer.concat([carry, chunk.subarray(0, read)]) : chunk.subarray(0, read);
      let start = 0;
      for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
        line++;
        if (index < 0) return `line ${line}: a row more than the ${rows.count.toLocaleString('en-US')} written`;
        const problem = rowProblem(buf.subarray(start, nl), index, rows.bytesOf(index) - 1);
        if (problem) return `line ${line}: ${problem}`;
        index = nextRow(rows, index + 1);
        start = nl + 1;
      }
      carry = Buffer.from(buf.subarray(start));
    }
    if (carry.length) return `line ${line + 1}: cut short (no newline at the end of the file)`;
    return index < 0 ? null : `the row for index ${index} is missing (${line.toLocaleString('en-US')} lines)`;
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

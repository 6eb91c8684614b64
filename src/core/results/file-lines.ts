import { readSync } from 'node:fs';

const CHUNK = 4 << 20;

/**
 * Reads an open file's whole lines in 4 MiB chunks, handing each to `onLine` as bytes of a buffer
 * (`start`…`end`, the newline left out) with its offset in the file and its number (from 1);
 * `onLine` returning a string stops the reading with it. Returns that string, or the bytes after
 * the last newline (a line cut short) as `rest` and the bytes of the whole lines as `size`.
 */
export function readLines(fd: number, onLine: (buf: Buffer, start: number, end: number, offset: number, line: number) => string | void): { stopped: string | null; rest: number; size: number; lines: number } {
  let carry = Buffer.alloc(0);
  let base = 0; // file offset of carry[0]
  let line = 0;
  const chunk = Buffer.allocUnsafe(CHUNK);
  for (let pos = 0; ; ) {
    const read = readSync(fd, chunk, 0, CHUNK, pos);
    if (read <= 0) break;
    pos += read;
    const buf = carry.length ? Buffer.concat([carry, chunk.subarray(0, read)]) : chunk.subarray(0, read);
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
      const stopped = onLine(buf, start, nl, base + start, ++line);
      if (typeof stopped === 'string') return { stopped, rest: 0, size: base + start, lines: line };
      start = nl + 1;
    }
    carry = Buffer.from(buf.subarray(start));
    base += start;
  }
  return { stopped: null, rest: carry.length, size: base, lines: line };
}

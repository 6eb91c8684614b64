import { readSync } from 'node:fs';

const CHUNK = 4 << 20;

export interface LinesRead {
  /** What `onLine` returned to stop the reading, else null. */
  stopped: string | null;
  /** Bytes after the last newline: a line cut short. */
  rest: number;
  /** Bytes of the whole lines read. */
  size: number;
  lines: number;
}

/**
 * Reads an open file's whole lines in 4 MiB chunks, handing each to `onLine` as bytes of a buffer
 * (`start`…`end`, the newline left out) with its offset in the file and its number (from 1);
 * `onLine` returning a string stops the reading with it. Yields after each chunk, so a reader in an
 * event loop that others share (the extension host) can give it back between chunks; returns what it read.
 */
export function* scanLines(fd: number, onLine: (buf: Buffer, start: number, end: number, offset: number, line: number) => string | void): Generator<void, LinesRead> {
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
    yield;
  }
  return { stopped: null, rest: carry.length, size: base, lines: line };
}

/** scanLines read to the end at once. */
export function readLines(fd: number, onLine: Parameters<typeof scanLines>[1]): LinesRead {
  const lines = scanLines(fd, onLine);
  for (;;) {
    const step = lines.next();
    if (step.done) return step.value;
  }
}

/** Lets the event loop run what waits (timers, I/O, other messages) before going on. */
export const giveWay = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

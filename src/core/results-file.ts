import { closeSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { PromptResult } from './result.ts';
import { resultRow } from './result-row.ts';

/** Where a row sits in a results file: its prompt index, byte offset and length (without the newline). */
export interface RowPlace {
  index: number;
  offset: number;
  length: number;
}

/** Rows waiting for the next flush are written together once the event loop turns (one syscall, not one per row). */
const FLUSH_BYTES = 1 << 20;

/**
 * Writes results as JSONL, one row per prompt, in input order when closed.
 *
 * To a file: each row reaches the disk as soon as its result is final, in the order results finish
 * (coalesced per event-loop turn), so a crash or a sleeping laptop loses none; `close()` then puts
 * the file in input order — only the latest row of each index is kept — by one pass over an
 * offset index (12 bytes a prompt). To stdout (no path): rows go out in input order, each as soon
 * as every row before it is out.
 *
 * `indexOf` maps a result's index to the row's (a resumed run sends a subset of the prompts).
 */
export class OrderedJsonlWriter {
  private offsets = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  private fd: number | null = null;
  private size = 0;
  /** Rows not yet written, encoded: `used` bytes of `chunk`. */
  private chunk = Buffer.allocUnsafe(FLUSH_BYTES);
  private used = 0;
  private flushQueued = false;
  private inOrder = true;
  private last = -1;
  private rows = 0;
  /** stdout: rows waiting for the ones before them. */
  private readonly waiting = new Map<number, string>();
  private next = 0;

  constructor(
    private readonly path?: string,
    private readonly indexOf: (resultIndex: number) => number = (i) => i,
    private readonly out: Writable = process.stdout,
    /** Rows of an existing results file to keep (`--resume`, `--retry-failed`): new rows are appended after them. */
    continued?: { rows: ReadonlyArray<RowPlace>; size: number },
  ) {
    if (!path) return;
    this.fd = openSync(path, continued ? 'r+' : 'w+');
    if (!continued) return;
    this.size = continued.size;
    this.inOrder = false;
    for (const r of continued.rows) this.record(r.index, r.offset, r.length);
  }

  /** Rows in the file (or out) so far, one per index. */
  get count(): number {
    return this.rows;
  }

  add(result: PromptResult): void {
    const index = this.indexOf(result.index);
    const line = `${resultRow(result, index)}\n`;
    if (this.fd === null) return this.addInOrder(index, line);
    // Encoded straight into the chunk (no byte count, join and copy per row); a UTF-16 unit is at most 3 bytes.
    if (this.used + line.length * 3 > this.chunk.length) {
      this.flush();
      if (line.length * 3 > this.chunk.length) this.chunk = Buffer.allocUnsafe(line.length * 3);
    }
    const bytes = this.chunk.write(line, this.used);
    this.record(index, this.size + this.used, bytes - 1);
    this.used += bytes;
    if (!this.flushQueued) {
      this.flushQueued = true;
      setImmediate(() => this.flush());
    }
  }

  private record(index: number, offset: number, length: number): void {
    if (index >= this.offsets.length) this.grow(index + 1);
    if (this.lengths[index] === 0) this.rows++;
    this.offsets[index] = offset;
    this.lengths[index] = length + 1; // 0 means "no row"
    if (index < this.last) this.inOrder = false;
    this.last = index;
  }

  private grow(min: number): void {
    const size = Math.max(min, this.offsets.length * 2);
    const offsets = new Float64Array(size);
    offsets.set(this.offsets);
    const lengths = new Uint32Array(size);
    lengths.set(this.lengths);
    this.offsets = offsets;
    this.lengths = lengths;
  }

  private flush(): void {
    this.flushQueued = false;
    if (this.fd === null || !this.used) return;
    writeSync(this.fd, this.chunk, 0, this.used, this.size);
    this.size += this.used;
    this.used = 0;
    if (this.chunk.length > FLUSH_BYTES) this.chunk = Buffer.allocUnsafe(FLUSH_BYTES); // one huge row's room, given back
  }

  private addInOrder(index: number, line: string): void {
    this.waiting.set(index, line);
    for (let r = this.waiting.get(this.next); r !== undefined; r = this.waiting.get(this.next)) {
      this.waiting.delete(this.next++);
      this.rows++;
      this.out.write(r);
    }
  }

  /**
   * Flushes, puts the file in input order, and closes. Returns how many rows there are; with
   * `total`, throws unless there is exactly one row for each index below it.
   */
  async close(total?: number): Promise<number> {
    if (this.fd === null) {
      if (this.out.writableNeedDrain) await once(this.out, 'drain');
      return this.check(total, this.waiting.size ? `no row for index ${this.next}` : null);
    }
    this.flush();
    const fd = this.fd;
    this.fd = null;
    try {
      if (!this.inOrder || this.size !== this.expectedSize()) this.sort(fd);
    } finally {
      closeSync(fd);
    }
    const gap = this.lengths.subarray(0, total ?? this.rows).indexOf(0);
    return this.check(total, gap >= 0 ? `no row for index ${gap}` : null);
  }

  private check(total: number | undefined, problem: string | null): number {
    if (total !== undefined && (problem || this.rows !== total)) {
      throw new Error(`results incomplete: ${this.rows.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} rows${problem ? ` (${problem})` : ''}`);
    }
    return this.rows;
  }

  /** Bytes of the rows we index, for telling a file that holds nothing else. */
  private expectedSize(): number {
    let bytes = 0;
    for (let i = 0; i < this.lengths.length; i++) bytes += this.lengths[i]!;
    return bytes;
  }

  /** Writes the indexed rows in index order to a sibling file, reading runs of adjacent rows at once, and renames it over. */
  private sort(fd: number): void {
    const tmp = `${this.path}.sorting`;
    const out = openSync(tmp, 'w');
    try {
      let chunk = Buffer.allocUnsafe(FLUSH_BYTES);
      let used = 0;
      const spill = () => {
        writeSync(out, chunk, 0, used);
        used = 0;
      };
      for (let i = 0; i < this.lengths.length; ) {
        if (this.lengths[i] === 0) {
          i++;
          continue;
        }
        // A run: rows i..j-1 that sit one after another in the file.
        const start = this.offsets[i]!;
        let end = start + this.lengths[i]!;
        let j = i + 1;
        while (j < this.lengths.length && this.lengths[j]! > 0 && this.offsets[j] === end) end += this.lengths[j++]!;
        const bytes = end - start;
        if (used + bytes > chunk.length) spill();
        if (bytes > chunk.length) chunk = Buffer.allocUnsafe(bytes);
        readSync(fd, chunk, used, bytes, start);
        used += bytes;
        i = j;
      }
      spill();
    } finally {
      closeSync(out);
    }
    renameSync(tmp, this.path!);
  }
}

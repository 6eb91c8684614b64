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
/** Bytes of rows `close()` puts in order at a time: what it holds in memory, twice. */
const SORT_WINDOW = 4 << 20;

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
    /** Bytes of rows `close()` puts in order at a time. */
    private readonly sortWindow = SORT_WINDOW,
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

  /**
   * Writes the indexed rows in index order to a sibling file and renames it over. Rows are read a
   * window of indices at a time, in file order, one read per run of rows that sit together on disk:
   * a batch's rows were written together but are strided among the indices (prompt i went to
   * endpoint i mod N), so reading index by index took a syscall per row (100,000: 110 ms).
   */
  private sort(fd: number): void {
    const tmp = `${this.path}.sorting`;
    const out = openSync(tmp, 'w');
    try {
      const present: number[] = [];
      const buffers = { disk: Buffer.alloc(0), ordered: Buffer.alloc(0) }; // reused: windows of one size
      for (let i = 0; i < this.lengths.length; ) {
        // The window: present rows from i on, up to sortWindow bytes (at least one row).
        present.length = 0;
        let bytes = 0;
        for (; i < this.lengths.length && (bytes < this.sortWindow || !present.length); i++) {
          if (this.lengths[i] === 0) continue;
          present.push(i);
          bytes += this.lengths[i]!;
        }
        if (!present.length) continue;
        if (buffers.disk.length < bytes) buffers.disk = Buffer.allocUnsafe(bytes);
        if (buffers.ordered.length < bytes) buffers.ordered = Buffer.allocUnsafe(bytes);
        this.readWindow(fd, present, buffers.disk, buffers.ordered);
        writeSync(out, buffers.ordered, 0, bytes);
      }
    } finally {
      closeSync(out);
    }
    renameSync(tmp, this.path!);
  }

  /** Reads the rows of `indices` (ascending) into `disk` in file order, then copies them to `ordered` in index order. */
  private readWindow(fd: number, indices: number[], disk: Buffer, ordered: Buffer): void {
    const offsets = Float64Array.from(indices, (i) => this.offsets[i]!);
    const offset = (k: number) => offsets[k]!;
    const length = (k: number) => this.lengths[indices[k]!]!;
    const byOffset = Array.from(indices.keys()).sort((a, b) => offsets[a]! - offsets[b]!);
    const at = new Float64Array(indices.length); // where row k sits in `disk`
    let used = 0;
    for (let r = 0; r < byOffset.length; ) {
      const start = offset(byOffset[r]!);
      let end = start;
      for (; r < byOffset.length && offset(byOffset[r]!) === end; r++) {
        at[byOffset[r]!] = used + end - start;
        end += length(byOffset[r]!);
      }
      readSync(fd, disk, used, end - start, start);
      used += end - start;
    }
    for (let k = 0, put = 0; k < indices.length; k++) put += disk.copy(ordered, put, at[k]!, at[k]! + length(k));
  }
}

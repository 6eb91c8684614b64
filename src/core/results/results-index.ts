/** Where a row sits in a results file: its prompt index, byte offset and length (without the newline). */
export interface RowPlace {
  index: number;
  offset: number;
  length: number;
}

/** Which file a row is in: the run's own temporary file (0), or the results file it continues (1). */
export type Source = 0 | 1;
export const PARTIAL: Source = 0;
export const FINAL: Source = 1;

/**
 * The latest row of each prompt index: its file, byte offset and length — 13 bytes a prompt, so a
 * million-row run never holds its rows, only where they are.
 */
export class RowIndex {
  private offsets = new Float64Array(1024);
  /** Row length + 1 (the newline); 0 means "no row". */
  private lengths = new Uint32Array(1024);
  private sources = new Uint8Array(1024);
  count = 0;
  /** Indices that will ever be recorded are below this. */
  get capacity(): number {
    return this.lengths.length;
  }

  record(index: number, offset: number, length: number, source: Source): void {
    if (index >= this.lengths.length) this.grow(index + 1);
    if (this.lengths[index] === 0) this.count++;
    this.offsets[index] = offset;
    this.lengths[index] = length + 1;
    this.sources[index] = source;
  }

  /** Forgets every row of `source` from `offset` on (bytes that never reached the disk). */
  dropFrom(source: Source, offset: number): void {
    for (let i = 0; i < this.lengths.length; i++) {
      if (this.lengths[i] && this.sources[i] === source && this.offsets[i]! >= offset) {
        this.lengths[i] = 0;
        this.count--;
      }
    }
  }

  /** Bytes of the row of `index` with its newline; 0 when there is none. */
  bytesOf(index: number): number {
    return this.lengths[index] ?? 0;
  }

  /** The first index below `total` with no row, or -1. */
  firstGap(total: number): number {
    return this.lengths.subarray(0, total).indexOf(0);
  }

  /**
   * Whether every row sits in `source`, one after another in index order from its first byte, and
   * the file holds nothing else (`size` bytes): then that file is already the ordered results.
   */
  isWholeFile(source: Source, size: number): boolean {
    let end = 0;
    for (let i = 0; i < this.lengths.length; i++) {
      const bytes = this.lengths[i]!;
      if (!bytes) continue;
      if (this.sources[i] !== source || this.offsets[i] !== end) return false;
      end += bytes;
    }
    return end === size;
  }

  /** Whether any row sits in `source`. */
  uses(source: Source): boolean {
    return this.countIn(source) > 0;
  }

  /** Rows that sit in `source`. */
  countIn(source: Source): number {
    let n = 0;
    for (let i = 0; i < this.lengths.length; i++) if (this.lengths[i] && this.sources[i] === source) n++;
    return n;
  }

  /**
   * Runs of rows in index order that sit one after another in the same file: each a single read
   * when the rows are copied in order (a batch's rows are strided among indices, so index by index
   * would be a read per row).
   */
  *runs(): Generator<{ source: Source; offset: number; bytes: number }> {
    for (let i = 0; i < this.lengths.length; ) {
      if (this.lengths[i] === 0) {
        i++;
        continue;
      }
      const source = this.sources[i] as Source;
      const offset = this.offsets[i]!;
      let end = offset + this.lengths[i]!;
      let j = i + 1;
      while (j < this.lengths.length && this.lengths[j]! > 0 && this.sources[j] === source && this.offsets[j] === end) end += this.lengths[j++]!;
      yield { source, offset, bytes: end - offset };
      i = j;
    }
  }

  private grow(min: number): void {
    const size = Math.max(min, this.lengths.length * 2);
    const offsets = new Float64Array(size);
    offsets.set(this.offsets);
    const lengths = new Uint32Array(size);
    lengths.set(this.lengths);
    const sources = new Uint8Array(size);
    sources.set(this.sources);
    this.offsets = offsets;
    this.lengths = lengths;
    this.sources = sources;
  }
}

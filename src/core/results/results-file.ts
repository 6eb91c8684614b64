import { closeSync, constants, existsSync, fstatSync, fsync, ftruncateSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import type { PromptResult } from '../run/result.ts';
import { resultRow } from './result-row.ts';
import { FINAL, PARTIAL, RowIndex, type RowPlace, type Source } from './results-index.ts';
import { lockResults, type ResultsLock } from './results-lock.ts';
import { giveWay } from './file-lines.ts';
import { problemOnDisk } from './results-verify.ts';

export type { RowPlace } from './results-index.ts';

/** Rows waiting for the next flush are written together once the event loop turns (one syscall, not one per row). */
const FLUSH_BYTES = 1 << 20;

/** Where a run writes a results file's rows until it is complete and in order. */
export const partialPathOf = (path: string): string => `${path}.partial`;

/** A row an earlier run left, and which file holds it: the results file or its `.partial`. */
export interface KeptRow extends RowPlace {
  inPartial: boolean;
}

/** What a resumed run starts from (`--resume`, `--retry-failed`, the panel's reruns). */
export interface Continued {
  /** Rows that stay; new rows are written after them. */
  rows: ReadonlyArray<KeptRow>;
  /** Bytes of whole rows in `<file>.partial` (a torn last row after them is cut off); 0 when there is none. */
  partialSize: number;
  /** Bytes of the results file itself; 0 when there is none. */
  finalSize: number;
}

/** The results file could not be written or put in place: the message says why and what was kept. */
export class ResultsFileError extends Error {
  override name = 'ResultsFileError';
  constructor(
    message: string,
    /** Rows still on disk (in the results file or its `.partial`). */
    readonly kept: number,
  ) {
    super(message);
  }
}

export interface WriterOptions {
  /** The results file; without one, rows go to `out` in input order. */
  path?: string;
  /** Maps a result's index to its row's (a resumed run sends a subset of the prompts). */
  indexOf?: (resultIndex: number) => number;
  out?: Writable;
  /** How a row is shown on `out` (the CLI escapes a terminal's control characters). */
  show?: (row: string) => string;
  continued?: Continued;
  /** The file's lock when the caller took it first (to read the file it continues); else the writer takes it. */
  lock?: ResultsLock;
  /** Told once when a row cannot be written (a full disk): the run had better stop. */
  onFailure?: (err: ResultsFileError) => void;
}

/**
 * Writes results as JSONL, one row per prompt, in input order when closed.
 *
 * To a file: a lock (`<file>.lock`) keeps any other writer out for the writer's life. Rows go to
 * `<file>.partial` as soon as their result is final, in the order results finish (coalesced per
 * event-loop turn), so a crash or a sleeping laptop loses none and an earlier results file stays
 * whole until the new one replaces it. `close()` puts the rows in input order — only the latest
 * row of each index is kept, with the rows a resumed run keeps — in a temporary file synced to disk
 * and renamed over the results file, then reads the file back to check every row is there, whole
 * and in its place. To stdout (no path): rows go out in input order, each as soon as every row
 * before it is out.
 */
export class OrderedJsonlWriter {
  private readonly rows = new RowIndex();
  private readonly path: string | undefined;
  private readonly partial: string;
  private readonly indexOf: (resultIndex: number) => number;
  private readonly out: Writable;
  private readonly show: (row: string) => string;
  private readonly onFailure: ((err: ResultsFileError) => void) | undefined;
  private lock: ResultsLock | undefined;
  private fd: number | null = null;
  /** Bytes of whole rows in the `.partial` file. */
  private size = 0;
  private finalSize = 0;
  /** Rows not yet written, encoded: `used` bytes of `chunk`. */
  private chunk = Buffer.allocUnsafe(FLUSH_BYTES);
  private used = 0;
  private flushQueued = false;
  /** Why rows stopped reaching the disk; rows that came after are only counted. */
  private failure: string | null = null;
  private unwritten = 0;
  /** stdout: rows waiting for the ones before them, and how many went out. */
  private readonly waiting = new Map<number, string>();
  private next = 0;

  constructor(options: WriterOptions = {}) {
    this.path = options.path;
    this.partial = partialPathOf(options.path ?? '');
    this.indexOf = options.indexOf ?? ((i) => i);
    this.out = options.out ?? process.stdout;
    this.show = options.show ?? ((row) => row);
    this.onFailure = options.onFailure;
    if (!this.path) return;
    this.lock = options.lock ?? lockResults(this.path);
    try {
      const c = options.continued;
      this.fd = openSync(this.partial, c ? constants.O_RDWR | constants.O_CREAT : 'w+');
      if (!c) return;
      ftruncateSync(this.fd, c.partialSize);
      this.size = c.partialSize;
      this.finalSize = c.finalSize;
      for (const r of c.rows) this.rows.record(r.index, r.offset, r.length, r.inPartial ? PARTIAL : FINAL);
    } catch (err) {
      if (this.fd !== null) closeSync(this.fd);
      this.lock.release();
      throw err;
    }
  }

  /** Rows in the file (or out) so far, one per index. */
  get count(): number {
    return this.path ? this.rows.count : this.next;
  }

  add(result: PromptResult): void {
    const index = this.indexOf(result.index);
    const line = `${resultRow(result, index)}\n`;
    if (!this.path) return this.addInOrder(index, line);
    if (this.failure !== null) return void this.unwritten++;
    // Encoded straight into the chunk (no byte count, join and copy per row); a UTF-16 unit is at most 3 bytes.
    if (this.used + line.length * 3 > this.chunk.length) {
      this.flush();
      if (this.failure !== null) return void this.unwritten++;
      if (line.length * 3 > this.chunk.length) this.chunk = Buffer.allocUnsafe(line.length * 3);
    }
    const bytes = this.chunk.write(line, this.used);
    this.rows.record(index, this.size + this.used, bytes - 1, PARTIAL);
    this.used += bytes;
    if (!this.flushQueued) {
      this.flushQueued = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushQueued = false;
    if (this.fd === null || !this.used || this.failure !== null) return;
    let written = 0;
    try {
      while (written < this.used) written += writeSync(this.fd, this.chunk, written, this.used - written, this.size + written);
    } catch (err) {
      return this.writeFailed(err, written);
    }
    this.size += this.used;
    this.used = 0;
    if (this.chunk.length > FLUSH_BYTES) this.chunk = Buffer.allocUnsafe(FLUSH_BYTES); // one huge row's room, given back
  }

  /**
   * A write failed (a full disk, a quota, an I/O error): the file is cut back to its last whole
   * row, the rows that did not reach it are forgotten and counted, and no more are written.
   */
  private writeFailed(err: unknown, written: number): void {
    const whole = written > 0 ? this.chunk.subarray(0, written).lastIndexOf(10) + 1 : 0;
    const before = this.rows.count;
    this.size += whole;
    this.rows.dropFrom(PARTIAL, this.size);
    this.unwritten += before - this.rows.count;
    this.used = 0;
    try {
      ftruncateSync(this.fd!, this.size);
    } catch {
      // the torn row stays after the whole ones; readers skip a torn last line
    }
    this.failure = `cannot write ${this.partial}: ${describe(err)}`;
    this.onFailure?.(this.error(this.failure, true));
  }

  private addInOrder(index: number, line: string): void {
    this.waiting.set(index, line);
    for (let r = this.waiting.get(this.next); r !== undefined; r = this.waiting.get(this.next)) {
      this.waiting.delete(this.next++);
      this.out.write(this.show(r));
    }
  }

  /**
   * Flushes, puts the file in input order, checks it on disk and closes. Returns how many rows
   * there are; with `total`, throws unless there is exactly one row for each index below it. Gives
   * the event loop way between megabytes: a million rows take seconds to order and check, and the
   * extension host serves every other extension meanwhile.
   * Throws ResultsFileError when the file could not be written, put in place or read back as written.
   */
  async close(total?: number): Promise<number> {
    if (!this.path) {
      if (this.out.writableNeedDrain) await once(this.out, 'drain');
      return this.check(total, this.next, this.waiting.size ? `no row for index ${this.next}` : null);
    }
    if (this.fd === null) throw new Error('results file already closed');
    this.flush();
    const fd = this.fd;
    this.fd = null;
    try {
      try {
        if (this.failure !== null) throw this.error(this.failure, true);
        await this.putInPlace(fd);
      } finally {
        closeSync(fd);
      }
      const problem = await problemOnDisk(this.path, this.rows);
      if (problem) throw new ResultsFileError(`${this.path} on disk is not what was written: ${problem}`, 0);
    } finally {
      this.lock?.release();
    }
    const gap = this.rows.firstGap(total ?? this.rows.count);
    return this.check(total, this.rows.count, gap >= 0 ? `no row for index ${gap}` : null);
  }

  private check(total: number | undefined, rows: number, problem: string | null): number {
    if (total !== undefined && (problem || rows !== total)) {
      throw new Error(`results incomplete: ${rows.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} rows${problem ? ` (${problem})` : ''}`);
    }
    return rows;
  }

  /**
   * The ordered rows become the results file: the `.partial` file itself when it already is them
   * (a run whose results came in order), the results file as it is when a resumed run added
   * nothing, else a copy in index order made in `<file>.sorting` and renamed over it.
   */
  private async putInPlace(fd: number): Promise<void> {
    const path = this.path!;
    const ours = linked(fd, this.partial);
    try {
      // The results file as it is only when nothing follows its rows: a line cut short at its end (a copy
      // cut off, an editor's stray text) is dropped by a copy, or the file would not read back as written.
      if (this.rows.uses(FINAL) && !this.rows.uses(PARTIAL) && this.rows.isWholeFile(FINAL, this.finalSize) && statSync(path).size === this.finalSize) {
        if (ours) rmSync(this.partial);
        return;
      }
      if (ours && !this.rows.uses(FINAL) && this.rows.isWholeFile(PARTIAL, this.size)) {
        await syncToDisk(fd);
        renameSync(this.partial, path);
        return;
      }
    } catch (err) {
      throw this.error(`cannot put ${path} in place: ${this.describe(err)}`, ours);
    }
    const sorting = `${path}.sorting`;
    let final: number | null = null;
    let out: number | null = null;
    try {
      if (this.rows.uses(FINAL)) final = openSync(path, 'r');
      out = openSync(sorting, 'w');
      await copyInOrder(this.rows, [fd, final ?? -1], out);
      await syncToDisk(out);
      closeSync(out);
      out = null;
      renameSync(sorting, path);
    } catch (err) {
      if (out !== null) closeSync(out);
      rmSync(sorting, { force: true });
      throw this.error(`cannot put ${path} in input order: ${this.describe(err)}`, ours);
    } finally {
      if (final !== null) closeSync(final);
    }
    if (ours) rmSync(this.partial, { force: true });
  }

  /** An error of the file system in words, a vanished folder named as such. */
  private describe(err: unknown): string {
    return existsSync(dirname(this.path!)) ? describe(err) : `the folder ${dirname(this.path!)} no longer exists`;
  }

  /** The error, saying what is still on disk: the rows in the `.partial` file (when it is still there) and in the results file. */
  private error(why: string, partialOnDisk: boolean): ResultsFileError {
    const inPartial = partialOnDisk ? this.rows.countIn(PARTIAL) : 0;
    const inFinal = this.rows.countIn(FINAL);
    const where = [inPartial ? `${int(inPartial)} in ${this.partial}` : '', inFinal ? `${int(inFinal)} in ${this.path}` : ''].filter(Boolean);
    const lost = this.unwritten + (partialOnDisk ? 0 : this.rows.countIn(PARTIAL));
    const kept = where.length ? `kept ${int(inPartial + inFinal)} rows (${where.join(', ')})` : 'no rows kept';
    return new ResultsFileError(`${why}; ${kept}${lost ? `; ${int(lost)} rows not written` : ''}`, inPartial + inFinal);
  }
}

const int = (n: number) => n.toLocaleString('en-US');

/** fsync off the event loop (libuv's thread pool): hundreds of megabytes take a while to reach the disk. */
const syncToDisk = promisify(fsync);

/** `ENOSPC: no space left on device`, without the system call and path node adds. */
function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ? `${e.code}: ${e.message.replace(/^\w+: /, '').split(',')[0]}` : e.message;
}

/** Whether `fd` is still the file at `path` (not deleted or replaced under us). */
function linked(fd: number, path: string): boolean {
  try {
    const open = fstatSync(fd);
    const named = statSync(path);
    return open.nlink > 0 && open.ino === named.ino && open.dev === named.dev;
  } catch {
    return false;
  }
}

/** Copies every indexed row, in index order, from its file (`from[source]`) to `out`, a read per run of adjacent rows; gives way after each megabyte written. */
async function copyInOrder(rows: RowIndex, from: readonly number[], out: number): Promise<void> {
  let chunk = Buffer.allocUnsafe(FLUSH_BYTES);
  let used = 0;
  let position = 0;
  const spill = () => {
    for (let done = 0; done < used; ) done += writeSync(out, chunk, done, used - done, position + done);
    position += used;
    used = 0;
  };
  for (const run of rows.runs()) {
    if (used + run.bytes > chunk.length) {
      spill();
      await giveWay();
    }
    if (run.bytes > chunk.length) chunk = Buffer.allocUnsafe(run.bytes);
    readFully(from[run.source as Source]!, chunk, used, run.bytes, run.offset);
    used += run.bytes;
  }
  spill();
}

function readFully(fd: number, into: Buffer, at: number, bytes: number, position: number): void {
  for (let done = 0; done < bytes; ) {
    const read = readSync(fd, into, at + done, bytes - done, position + done);
    if (read <= 0) throw new Error(`a results file is shorter than the rows written to it (${position + done} bytes)`);
    done += read;
  }
}

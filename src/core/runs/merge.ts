import { closeSync, existsSync, fsyncSync, openSync, readFileSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { readLines } from '../results/file-lines.ts';
import { partialPathOf } from '../results/results-file.ts';
import { FINAL, RowIndex } from '../results/results-index.ts';
import { problemOnDisk } from '../results/results-verify.ts';
import { ownerOf, shardInfoPathOf, type ShardInfo } from './shard.ts';

const FLUSH_BYTES = 1 << 20;

/** The shards cannot be merged as asked: what is wrong, and nothing was written. */
export class MergeError extends Error {
  override name = 'MergeError';
}

/** A shard that began but never finished its file (killed): its rows are in its `.partial`. */
class UnfinishedShard extends MergeError {}

/** One shard's results file as merging reads it: where each of its rows is. */
interface ShardRows {
  file: string;
  info: ShardInfo;
  fd: number;
  offsets: Float64Array;
  lengths: Uint32Array;
  rows: number;
}

export interface MergeReport {
  rows: number;
  /** Prompt indices with no row (only with `incomplete`: they are left out, and the merge is not whole). */
  missing: number;
  /** Rows whose status is not ok (failed or cancelled). */
  notOk: number;
  /** Of those, the rows a cancel or a drain left (the rest failed). */
  cancelled: number;
}

/** In a row resultRow wrote, the first `,"status":"` is its status (a JSON string holds no bare quote). */
const STATUS = Buffer.from(',"status":"');
const OK = Buffer.from('ok"');
const CANCELLED = Buffer.from('cancelled"');

/**
 * Merges the shards' results files into one results file in input order: row i is the row the
 * shard owning prompt i wrote for it (its index rewritten from the shard's to the run's). The
 * shards must be one run's — the same shard count, prompts (by hash), endpoints, each rank once —
 * and each complete (no `.partial` left, a row for each of its prompts, in order), or nothing is
 * written (MergeError). With `incomplete`, the missing rows are left out instead and counted. The
 * merged file is written beside the target, synced, renamed over it and read back, as every results file is.
 */
export async function mergeShards(out: string, files: readonly string[], options: { incomplete?: boolean } = {}): Promise<MergeReport> {
  const shards: ShardRows[] = [];
  try {
    for (const file of files) {
      try {
        shards.push(openShard(file));
      } catch (err) {
        if (!(err instanceof UnfinishedShard && options.incomplete)) throw err;
      }
    }
    const first = shards[0];
    if (!first) throw new MergeError('no shard files given');
    const { shards: count, prompts, endpoints, promptsSha256 } = first.info;
    const byRank = new Array<ShardRows | undefined>(count);
    for (const s of shards) {
      const i = s.info;
      if (i.shards !== count || i.prompts !== prompts || i.endpoints !== endpoints || i.promptsSha256 !== promptsSha256) {
        throw new MergeError(`${s.file} is shard ${i.rank} of another run (${i.shards} shards, ${i.prompts} prompts, ${i.endpoints} endpoints) than ${first.file} (${count} shards, ${prompts} prompts, ${endpoints} endpoints)`);
      }
      if (byRank[i.rank]) throw new MergeError(`${s.file} and ${byRank[i.rank]!.file} are both shard ${i.rank}`);
      byRank[i.rank] = s;
    }
    const absent = [...byRank.keys()].filter((r) => !byRank[r]);
    if (absent.length && !options.incomplete) throw new MergeError(`shard(s) ${absent.join(', ')} of ${count} not given`);
    // How many rows each shard owes: its endpoints' share of the prompts.
    const owed = new Array<number>(count).fill(0);
    for (let j = 0; j < Math.min(endpoints, prompts); j++) owed[ownerOf(j, count, endpoints)]! += Math.ceil((prompts - j) / endpoints);
    for (const s of shards) {
      if (s.rows < owed[s.info.rank]! && !options.incomplete) {
        const unfinished = existsSync(partialPathOf(s.file)) ? ` (an unfinished run left ${partialPathOf(s.file)}: resume that shard with --resume)` : '';
        throw new MergeError(`${s.file}: ${s.rows.toLocaleString('en-US')} of ${owed[s.info.rank]!.toLocaleString('en-US')} rows${unfinished}`);
      }
      if (s.rows > owed[s.info.rank]!) throw new MergeError(`${s.file}: ${s.rows} rows where shard ${s.info.rank} owns ${owed[s.info.rank]} prompts`);
    }
    return await writeMerged(out, byRank, prompts, endpoints);
  } finally {
    for (const s of shards) closeSync(s.fd);
  }
}

function openShard(file: string): ShardRows {
  const infoPath = shardInfoPathOf(file);
  let info: ShardInfo;
  try {
    info = JSON.parse(readFileSync(infoPath, 'utf8')) as ShardInfo;
  } catch (err) {
    throw new MergeError(`${file}: cannot read ${infoPath} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): is it a shard's results file?`);
  }
  if (![info.rank, info.shards, info.prompts, info.endpoints].every((n) => Number.isSafeInteger(n) && n >= 0) || info.rank >= info.shards) throw new MergeError(`${infoPath}: not a shard description`);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if (existsSync(partialPathOf(file))) throw new UnfinishedShard(`shard ${info.rank} of ${info.shards} is unfinished: its rows so far are in ${partialPathOf(file)} (resume that shard alone: swarm scatter --resume FILE --shards ${info.shards} --shard ${info.rank} with the same --hostfile and --prompts)`);
    throw new MergeError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let offsets = new Float64Array(1024);
  let lengths = new Uint32Array(1024);
  let rows = 0;
  const read = readLines(fd, (buf, start, end, offset, line) => {
    // A shard's file is complete and in order once its run closed it: row k is the shard's prompt k.
    const head = `{"index":${rows},`;
    if (buf.toString('latin1', start, start + head.length) !== head) {
      try {
        if ((JSON.parse(buf.toString('utf8', start, end)) as { index?: unknown }).index !== rows) return `${file}:${line}: not the row for index ${rows} (not a complete shard file in order)`;
      } catch {
        return `${file}:${line}: not a result row`;
      }
      return `${file}:${line}: a row this version did not write (expected it to start ${head})`;
    }
    if (rows === lengths.length) {
      offsets = grow(offsets);
      lengths = grow(lengths);
    }
    offsets[rows] = offset;
    lengths[rows++] = end - start;
  });
  if (read.stopped || read.rest) {
    closeSync(fd);
    throw new MergeError(read.stopped ?? `${file}: the last line is cut short`);
  }
  return { file, info, fd, offsets, lengths, rows };
}

function grow<T extends Float64Array | Uint32Array>(a: T): T {
  const bigger = new (a.constructor as new (n: number) => T)(a.length * 2);
  bigger.set(a);
  return bigger;
}

/** One pass in input order: each prompt's row from its shard, the next one that shard has. */
async function writeMerged(out: string, byRank: ReadonlyArray<ShardRows | undefined>, prompts: number, endpoints: number): Promise<MergeReport> {
  const tmp = `${out}.merging`;
  const written = new RowIndex();
  const next = new Array<number>(byRank.length).fill(0);
  let chunk = Buffer.allocUnsafe(FLUSH_BYTES);
  let used = 0;
  let position = 0;
  let missing = 0;
  let notOk = 0;
  let cancelled = 0;
  // Each shard is read in order: through a window of its file, a read per window, not per row.
  const size = Math.max(16 << 10, Math.min(FLUSH_BYTES, Math.floor((64 << 20) / byRank.length)));
  const windows = byRank.map(() => new ReadWindow(size));
  const fd = openSync(tmp, 'w');
  const spill = () => {
    for (let done = 0; done < used; ) done += writeSync(fd, chunk, done, used - done, position + done);
    position += used;
    used = 0;
  };
  try {
    for (let i = 0; i < prompts; i++) {
      const shard = byRank[ownerOf(i % endpoints, byRank.length, endpoints)];
      const k = shard ? next[shard.info.rank]!++ : 0;
      if (!shard || k >= shard.rows) {
        missing++;
        continue;
      }
      const length = shard.lengths[k]!;
      const oldHead = `{"index":${k},`.length;
      const newHead = `{"index":${i},`;
      const bytes = newHead.length + length - oldHead + 1;
      if (used + bytes > chunk.length) spill();
      if (bytes > chunk.length) chunk = Buffer.allocUnsafe(bytes);
      const at = used;
      used += chunk.write(newHead, used, 'latin1');
      const body = length - oldHead;
      used += windows[shard.info.rank]!.copy(shard, shard.offsets[k]! + oldHead, body, chunk, used);
      const status = chunk.indexOf(STATUS, at);
      const is = (word: Buffer) => status >= 0 && status < used && chunk.compare(word, 0, word.length, status + STATUS.length, status + STATUS.length + word.length) === 0;
      if (!is(OK)) {
        notOk++;
        if (is(CANCELLED)) cancelled++;
      }
      chunk[used++] = 10;
      written.record(i, position + at, bytes - 1, FINAL);
    }
    spill();
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, out);
  const problem = await problemOnDisk(out, written);
  if (problem) throw new MergeError(`${out} on disk is not what was written: ${problem}`);
  return { rows: written.count, missing, notOk, cancelled };
}

/** A window on a file read front to back: rows are copied out of it, and it moves on when one is past its end. */
class ReadWindow {
  private buf: Buffer;
  private from = 0;
  private bytes = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Copies `length` bytes at `offset` of the shard's file into `into` at `at`; returns `length`. */
  copy(shard: ShardRows, offset: number, length: number, into: Buffer, at: number): number {
    if (offset < this.from || offset + length > this.from + this.bytes) {
      if (length > this.buf.length) this.buf = Buffer.allocUnsafe(length);
      this.from = offset;
      this.bytes = 0;
      for (let n = 1; n > 0 && this.bytes < this.buf.length; this.bytes += n) n = readSync(shard.fd, this.buf, this.bytes, this.buf.length - this.bytes, offset + this.bytes);
      if (this.bytes < length) throw new MergeError(`${shard.file} changed while it was merged`);
    }
    return this.buf.copy(into, at, offset - this.from, offset - this.from + length);
  }
}

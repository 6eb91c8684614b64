import { appendFile, copyFile, mkdir, open, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { liveState, processAlive, readStatus, STATUS_FILE } from '../core/runs/status.ts';
import { partialPathOf } from '../core/results/results-file.ts';
import { hostname } from 'node:os';

const POLL_MS = 1_000;
/** At most this much of a results file is read per poll (a run of a million rows catches up over a few polls). */
const CHUNK = 8 << 20;

/**
 * Follows a detached run's rows into a file here (`target`), for the editor: while it runs, the
 * rows as they land (its results file's `.partial`, in the order they finished, after the rows an
 * earlier run kept); once it ends, its whole results file, in input order. Reads the run's files
 * only: the run neither knows nor waits for it.
 */
export class DetachedRows {
  private timer: NodeJS.Timeout | undefined;
  private offset = 0;
  private began = false;
  private busy = false;
  private ended = false;

  constructor(
    readonly folder: string,
    readonly target: string,
    private readonly onEnd: (state: string, exitCode: number | undefined) => void,
  ) {}

  async start(): Promise<void> {
    await mkdir(dirname(this.target), { recursive: true });
    await this.tick();
    if (!this.ended) this.timer = setInterval(() => void this.tick(), POLL_MS);
  }

  private async tick(): Promise<void> {
    if (this.busy || this.ended) return;
    this.busy = true;
    try {
      const status = readStatus(join(this.folder, STATUS_FILE));
      if (!status?.results) return;
      const live = liveState(status, hostname(), processAlive);
      const results = status.results;
      if (live === 'finished' && (await exists(results))) {
        await copyFile(results, this.target);
        return this.end(live, status.exitCode);
      }
      if (!this.began) {
        // A resumed run's kept rows are in its results file; the new ones come in its .partial.
        await (await exists(results) ? copyFile(results, this.target) : writeFile(this.target, ''));
        this.began = true;
      }
      await this.copyNew(partialPathOf(results));
      if (live !== 'running' && live !== 'starting') this.end(live, status.exitCode);
    } finally {
      this.busy = false;
    }
  }

  /** Appends the whole rows the .partial gained since the last look (a new .partial, after a resume, from its start). */
  private async copyNew(partial: string): Promise<void> {
    const size = await stat(partial).then((s) => s.size, () => 0);
    if (size < this.offset) this.offset = 0;
    if (size === this.offset) return;
    const file = await open(partial, 'r');
    try {
      const buffer = Buffer.alloc(Math.min(size - this.offset, CHUNK));
      const { bytesRead } = await file.read(buffer, 0, buffer.length, this.offset);
      const whole = buffer.subarray(0, bytesRead).lastIndexOf(0x0a) + 1;
      if (!whole) return;
      await appendFile(this.target, buffer.subarray(0, whole));
      this.offset += whole;
    } finally {
      await file.close();
    }
  }

  private end(state: string, exitCode: number | undefined): void {
    this.ended = true;
    this.dispose();
    this.onEnd(state, exitCode);
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

const exists = (path: string) => stat(path).then(() => true, () => false);

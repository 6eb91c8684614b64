/**
 * The host's messages, handed on one at a time in the order they came. A `runProgress` carries its
 * rows as JSONL (see the protocol): they are parsed a slice at a time, the page free to draw between
 * slices, and the message is handed on with its rows once all are read; what came after it waits
 * its turn, so a run's end is never reduced before its last rows. No DOM: node tests it.
 */
import type { HostMessage, ResultRow } from '../../src/panel/protocol.ts';
import { parseResultRow } from '../../src/panel/result-rows.ts';

type Progress = Extract<HostMessage, { type: 'runProgress' }>;
/** A runProgress with its rows read. */
export type ProgressRows = Omit<Progress, 'resultsJsonl'> & { results: ResultRow[] };
export type Inbound = Exclude<HostMessage, Progress> | ProgressRows;

/** Rows are parsed for at most about this long (ms) before the page gets its thread back. */
export const SLICE_MS = 8;
/** How often the clock is read while parsing (every this many lines). */
const CHECK_EVERY = 32;

export class Inbox {
  private readonly queue: HostMessage[] = [];
  private busy = false;

  private readonly badRows: (count: number, why: string) => void;
  private readonly yieldToPage: () => Promise<void>;
  private readonly sliceMs: number;

  constructor(
    private readonly deliver: (message: Inbound) => void,
    options: {
      /** Rows that could not be read (skipped): how many, and why the first could not. */
      badRows: (count: number, why: string) => void;
      /** Waits for the page's next task; a test may step it by hand. */
      yieldToPage?: () => Promise<void>;
      sliceMs?: number;
    },
  ) {
    this.badRows = options.badRows;
    this.yieldToPage = options.yieldToPage ?? (() => new Promise((resolve) => setTimeout(resolve, 0)));
    this.sliceMs = options.sliceMs ?? SLICE_MS;
  }

  take(message: HostMessage): void {
    this.queue.push(message);
    if (!this.busy) void this.pump();
  }

  /** Hands on every message waiting; the first (and any with no rows to parse) in the task that took it. */
  private async pump(): Promise<void> {
    this.busy = true;
    try {
      while (this.queue.length) {
        const m = this.queue.shift()!;
        try {
          if (m.type !== 'runProgress') this.deliver(m);
          else {
            const { resultsJsonl, ...rest } = m;
            this.deliver({ ...rest, results: resultsJsonl ? await this.rows(resultsJsonl) : [] });
          }
        } catch (err) {
          // One message the page could not take must not stop the ones after it.
          console.error(`swarm panel: a ${m.type} message failed: ${(err as Error).stack ?? err}`);
        }
      }
    } finally {
      this.busy = false;
    }
  }

  private async rows(jsonl: string): Promise<ResultRow[]> {
    const rows: ResultRow[] = [];
    let bad = 0;
    let why = '';
    let since = performance.now();
    let lines = 0;
    for (let start = 0; start < jsonl.length; ) {
      let end = jsonl.indexOf('\n', start);
      if (end < 0) end = jsonl.length;
      const line = jsonl.slice(start, end);
      start = end + 1;
      if (line.trim()) {
        try {
          rows.push(parseResultRow(line));
        } catch (err) {
          if (!bad++) why = (err as Error).message;
        }
      }
      if (++lines % CHECK_EVERY === 0 && start < jsonl.length && performance.now() - since >= this.sliceMs) {
        await this.yieldToPage();
        since = performance.now();
      }
    }
    if (bad) this.badRows(bad, why);
    return rows;
  }
}

import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { PromptResult } from './result.ts';

/**
 * Writes results as JSONL in input order while the run goes on: each result waits only for the
 * ones before it, so an interrupted run still leaves every finished prefix on disk.
 */
export class OrderedJsonlWriter {
  private next = 0;
  private readonly waiting = new Map<number, PromptResult>();
  private readonly out: Writable;
  private readonly ownsStream: boolean;

  constructor(path?: string) {
    this.out = path ? createWriteStream(path) : process.stdout;
    this.ownsStream = Boolean(path);
  }

  add(result: PromptResult): void {
    this.waiting.set(result.index, result);
    for (let r = this.waiting.get(this.next); r; r = this.waiting.get(this.next)) {
      this.waiting.delete(this.next++);
      this.out.write(`${JSON.stringify(r)}\n`);
    }
  }

  /** Flushes and closes (stdout is only drained). */
  async close(): Promise<void> {
    if (this.waiting.size) throw new Error(`results missing before index ${[...this.waiting.keys()].sort((a, b) => a - b)[0]}`);
    if (this.ownsStream) {
      this.out.end();
      await once(this.out, 'finish');
    } else if (this.out.writableNeedDrain) {
      await once(this.out, 'drain');
    }
  }
}

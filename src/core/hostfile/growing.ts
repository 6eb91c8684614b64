import { stat } from 'node:fs/promises';
import { HostfileError } from './issue.ts';
import { readHostfileText, type LoadedHostfile } from './load.ts';
import { parseHostfile } from './parse.ts';

export interface HostfileRead extends LoadedHostfile {
  /** It ends in a newline and has not changed for the settle time: no more lines are coming. */
  final: boolean;
  /** Its text differs from the last read's. */
  changed: boolean;
}

/**
 * A hostfile a job may still be writing (a PBS script appends a line per server as it starts),
 * read again at each `read()`. Only whole lines count — a line being written could read as another
 * port (`…\t67` of `…\t6739`) — and the file is final once it ends in a newline and has not
 * changed for `settleMs`; a file last written longer ago than that is final at its first read.
 */
export class GrowingHostfile {
  private text: string | undefined;
  private changedAt = 0;

  constructor(
    readonly path: string,
    private readonly settleMs: number,
  ) {}

  async read(): Promise<HostfileRead> {
    const modified = (await stat(this.path).catch(() => undefined))?.mtimeMs ?? Date.now();
    const text = await readHostfileText(this.path);
    const changed = text !== this.text;
    if (changed) this.changedAt = this.text === undefined ? Math.min(modified, Date.now()) : Date.now();
    this.text = text;
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    const { endpoints, errors, warnings } = parseHostfile(whole, this.path);
    // "No endpoints" (line 0) only means none is written yet; any other error is in a whole line.
    const real = errors.filter((e) => e.line > 0);
    if (real.length) throw new HostfileError(real);
    const final = endpoints.length > 0 && whole === text && Date.now() - this.changedAt >= this.settleMs;
    return { endpoints, warnings, final, changed };
  }
}

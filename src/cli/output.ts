import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { failedResult, lockResults, OrderedJsonlWriter, partialPathOf, ResultsLockedError, type PromptList, type PromptResult, type ResultsLock } from '../core/index.ts';
import { CliError } from './exit.ts';
import { printable, terminalSafe } from './format.ts';
import { exitCode, onExit, type Stop } from './interrupt.ts';

/**
 * An output file (`--out`) checked before anything starts: its folder exists, it can be written, and it is none of
 * the input files (which it would silently overwrite).
 */
export async function checkOutPath(out: string, inputs: ReadonlyArray<[flag: string, path: string | undefined]>, flag = '--out'): Promise<void> {
  const shown = `${flag} ${printable(out)}`;
  const target = resolve(out);
  const existing = await stat(target).catch(() => undefined);
  if (existing?.isDirectory()) throw new CliError(`${shown}: is a folder; give a file name`);
  const folder = await stat(dirname(target)).catch(() => undefined);
  if (!folder?.isDirectory()) throw new CliError(`${shown}: folder ${printable(dirname(target))} does not exist`);
  await access(existing ? target : dirname(target), constants.W_OK).catch(() => {
    throw new CliError(`${shown}: cannot write ${existing ? 'this file' : `in ${printable(dirname(target))}`} (permission denied)`);
  });
  if (!existing) return;
  for (const [inputFlag, path] of inputs) {
    const input = path === undefined ? undefined : await stat(path).catch(() => undefined);
    if (input && input.dev === existing.dev && input.ino === existing.ino) throw new CliError(`${shown} is the ${inputFlag} file; refusing to overwrite an input`);
  }
}

/**
 * The results file a command writes, claimed before anything is sent: checked as checkOutPath does,
 * a regular file (it is written beside and renamed over), and locked for the command's life — a
 * second run on it is refused (exit 2) and the first goes on unharmed. Unless it `continues` the
 * file, a run is refused too while an unfinished run's rows wait in its `.partial` file (`unfinished`
 * says how to complete them). The lock is released when the writer closes, or when the process exits first.
 */
export async function claimResults(
  out: string,
  inputs: ReadonlyArray<[flag: string, path: string | undefined]>,
  how: { flag: string; continues?: boolean; unfinished?: string },
): Promise<ResultsLock> {
  const { flag } = how;
  await checkOutPath(out, inputs, flag);
  const shown = `${flag} ${printable(out)}`;
  if ((await stat(out).catch(() => undefined))?.isFile() === false) throw new CliError(`${shown}: not a regular file (results are written beside it and renamed over it); omit ${flag} to write to stdout`);
  let lock: ResultsLock;
  try {
    lock = lockResults(out);
  } catch (err) {
    throw err instanceof ResultsLockedError ? new CliError(`${flag} ${err.message}`) : err;
  }
  const forget = onExit(() => lock.release());
  const claimed: ResultsLock = {
    path: lock.path,
    release() {
      forget();
      lock.release();
    },
  };
  const partial = partialPathOf(out);
  if (!how.continues && (await stat(partial).catch(() => undefined))?.size) {
    claimed.release();
    throw new CliError(`${shown}: ${printable(partial)} holds the rows of an unfinished run; ${how.unfinished ?? 'delete it to start again'}`);
  }
  return claimed;
}

/** Stopped before the run began: every prompt still to send is written, in order, as cancelled. */
export async function writeAllCancelled(writer: OrderedJsonlWriter, prompts: PromptList, total: number): Promise<void> {
  process.stderr.write('cancelled before the run started: every prompt written as cancelled\n');
  for (let index = 0; index < prompts.length; index++) {
    const p = prompts.at(index)!;
    writer.add(failedResult({ prompt: p.prompt, input: p.input, index, queuedMs: 0 }, 'cancelled', 'cancelled', 0));
  }
  await writer.close(total);
}

/** Rows on stdout may reach a terminal: the servers' control characters in them are escaped as JSON's \u escapes. */
export const shownRow = (row: string): string => terminalSafe(row, true);

/**
 * A finished run's rows, in input order, to its claimed results file (or stdout without one); a
 * file that could not be written and checked is an error of the run (exit 1, or the signal's code
 * when one stopped the run).
 */
export async function writeRows(results: readonly PromptResult[], out: string | undefined, lock: ResultsLock | undefined, stop: Stop): Promise<void> {
  const writer = new OrderedJsonlWriter({ ...(out ? { path: out } : {}), ...(lock ? { lock } : {}), show: shownRow });
  for (const r of results) writer.add(r);
  await writer.close(results.length).catch((err: unknown) => {
    throw new CliError(`error: ${(err as Error).message}`, exitCode(stop, false));
  });
}

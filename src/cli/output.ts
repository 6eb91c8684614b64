import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { failedResult, type OrderedJsonlWriter, type PromptInput } from '../core/index.ts';
import { CliError } from './exit.ts';
import { printable } from './format.ts';

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

/** Stopped before the run began: every prompt still to send is written, in order, as cancelled. */
export async function writeAllCancelled(writer: OrderedJsonlWriter, prompts: readonly PromptInput[], total: number): Promise<void> {
  process.stderr.write('cancelled before the run started: every prompt written as cancelled\n');
  prompts.forEach((p, index) => writer.add(failedResult({ prompt: p.prompt, input: p.input, index, queuedMs: 0 }, 'cancelled', 'cancelled', 0)));
  await writer.close(total);
}

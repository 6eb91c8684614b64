import { Command } from 'commander';
import { readSavedRows, ResumeError } from '../../core/index.ts';
import { CliError, EXIT } from '../exit.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode, stopped } from '../interrupt.ts';
import { checkOutPath } from '../output.ts';
import { addPlaceOptions, openPlace, resumeCommandOf, type PlaceFlags } from '../detached/detach.ts';
import { checkId, type RunView } from '../detached/here.ts';
import type { RunsPlace } from '../detached/place.ts';
import { addLoginOptions } from '../detached/login-options.ts';
import { OUTPUT_FILE } from '../detached/spec.ts';
import { runLine } from './runs.ts';

interface AttachFlags extends PlaceFlags {
  out?: string;
  quiet?: boolean;
}

const POLL_MS = 500;
/** Without a terminal, a progress line at most this often. */
const LINE_MS = 5_000;

export function attachCommand(): Command {
  const cmd = new Command('attach')
    .usage('RUN [--via LOGIN] [--out FILE] [options]')
    .description("follow a detached run: live progress, then its summary; exits with the run's exit code (Ctrl-C detaches, the run goes on)")
    .argument('<run>', 'the run id (swarm runs lists them)')
    .option('--out <file>', 'when the run ends, copy its results file here (every row checked, in input order)')
    .option('--quiet', 'no progress, only the summary');
  addLoginOptions(cmd);
  addPlaceOptions(cmd);
  return cmd.action(async (id: string, flags: AttachFlags) => {
    checkId(id);
    if (flags.out) await checkOutPath(flags.out, []);
    const stop = claimStop();
    const place = await openPlace(flags);
    try {
      let run = (await place.list(id))[0]!;
      let shown = 0;
      let lastLine = -1;
      for (;;) {
        if (!flags.quiet && run.live !== 'finished' && run.live !== 'died' && run.done !== lastLine && Date.now() - shown >= (process.stderr.isTTY ? 0 : LINE_MS)) {
          process.stderr.write(process.stderr.isTTY ? `\r${runLine(run)}\x1b[K` : `${runLine(run)}\n`);
          shown = Date.now();
          lastLine = run.done;
        }
        if (run.live === 'finished' || run.live === 'died') break;
        await Promise.race([new Promise((r) => setTimeout(r, POLL_MS)), stopped(stop)]);
        if (stop.reason()) {
          process.stderr.write(`\ndetached from run ${id}; it goes on (swarm attach ${id} to follow it again, swarm cancel ${id} to stop it)\n`);
          process.exitCode = exitCode(stop, false);
          return;
        }
        run = (await place.list(id))[0]!;
      }
      if (process.stderr.isTTY && !flags.quiet) process.stderr.write('\n');
      process.exitCode = await conclude(run, place, flags.out, resumeCommandOf(run, flags));
    } finally {
      await place.close();
    }
  });
}

/** The run's end said: its summary on stderr, a pattern's outcome on stdout, the results copied (`resume`: the command that completes them, if one does); returns the exit code to give. */
async function conclude(run: RunView, place: RunsPlace, out: string | undefined, resume: string | undefined): Promise<number> {
  process.stderr.write(`${runLine(run)}\n`);
  for (const e of run.errors) process.stderr.write(`  error: ${printable(e)}\n`);
  for (const w of run.warnings ?? []) process.stderr.write(`  warning: ${printable(w)}\n`);
  if (run.live === 'died') {
    const partial = run.results ? ` its finished rows are in ${run.results}.partial${resume ? `; complete them with ${resume}` : ''}` : '';
    process.stderr.write(`run ${run.id} died (its process ${run.pid} on ${run.host} is gone before it ended):${partial}\n`);
    return EXIT.failed;
  }
  const output = await place.read(`${run.folder}/${OUTPUT_FILE}`);
  if (output) process.stdout.write(output);
  if (run.results) process.stderr.write(`results: ${run.results}\n`);
  if (out && run.results) {
    await place.copy(run.results, out).catch((err: unknown) => {
      throw new CliError(`cannot copy the results of run ${run.id} (${run.results}): ${(err as Error).message}`, 1);
    });
    const rows = checkRows(out, run.total);
    process.stderr.write(`copied ${rows.toLocaleString('en-US')} rows to ${printable(out)}, in input order\n`);
  }
  return run.exitCode ?? EXIT.failed;
}

/** A copied results file: a row for each prompt, in input order, nothing else. */
function checkRows(path: string, total: number): number {
  let previous = -1;
  let count = 0;
  try {
    readSavedRows(path, (row) => {
      if (row.index !== previous + 1) throw new ResumeError(`${path}:${row.line}: the row for index ${row.index} follows ${previous}`);
      previous = row.index;
      count++;
    });
  } catch (err) {
    throw new CliError(`the copied results are not whole: ${(err as Error).message}`, 1);
  }
  if (count < total) throw new CliError(`the copied results hold ${count} rows, the run had ${total} prompts`, 1);
  return count;
}

import type { Run, SwarmPool } from '../core/index.ts';
import { failureLines, type Placement } from './failures.ts';
import { printable, terminalSafe } from './format.ts';
import { claimStop, exitCode } from './interrupt.ts';
import { narrowed, runOptions, type GenerationFlags, type SwarmFlags } from './options.ts';
import { claimResults, writeRows } from './output.ts';
import { watchRun } from './progress.ts';
import { openUnlessStopped, type ReachFlags } from './swarm.ts';
import { detach, type DetachFlags } from './detached/detach.ts';
import { jobOfRun, jobStopLine, jobWatch, type JobRunFlags } from './job-run.ts';

export interface PatternFlags extends SwarmFlags, GenerationFlags, ReachFlags, DetachFlags, JobRunFlags {
  json?: boolean;
  out?: string;
  quiet?: boolean;
}

/** A pattern command's run, given its validated input file (`[flag, path]`, never overwritten by --out). */
export interface PatternRun<T> {
  label: string;
  /** The command's name (`reduce`), to start it detached. */
  command: string;
  input: [flag: string, path: string | undefined];
  start(pool: SwarmPool): Run<T>;
  /** The outcome as printed without --json. */
  text(outcome: T): string;
  /** Where a prompt sat (its round, stage, level) and which it was, to say what failed. */
  place: Placement;
}

/**
 * The shape every multi-step pattern command shares: open the swarm (Ctrl-C safe), run, every answer
 * to --out as JSONL, what failed to stderr (counts, and which of each step), the outcome to stdout
 * (text, or JSON with --json); exit 0 only with an outcome and every prompt answered, else 1 (or the
 * signal's code).
 */
export async function runPattern<T>(flags: PatternFlags, p: PatternRun<T>): Promise<void> {
  if (flags.detach) return detach(p.command, flags);
  const job = await jobOfRun(flags);
  const lock = flags.out ? await claimResults(flags.out, [p.input, ['--hostfile', flags.hostfile]], { flag: '--out' }) : undefined;
  const stop = claimStop();
  const swarm = await openUnlessStopped(flags, stop, { select: runOptions(flags) });
  if (!swarm) return;
  const report = await watchRun(p.start(narrowed(swarm.pool, flags)), p.label, Boolean(flags.quiet), stop, jobWatch(flags, job, swarm));
  await swarm.close();
  if (flags.out) await writeRows(report.results, flags.out, lock, stop);
  for (const line of failureLines(report.results, p.place)) process.stderr.write(`${line}\n`);
  const outcome = report.outcome;
  // Answers are the servers' text: escaped for the terminal, JSON staying JSON.
  if (outcome !== undefined) process.stdout.write(`${flags.json ? terminalSafe(JSON.stringify(outcome), true) : terminalSafe(p.text(outcome))}\n`);
  else if (!stop.reason()) process.stderr.write(`${jobStopLine(report, `swarm ${p.command} again on the next job's hostfile`) ?? `error: ${printable(report.error ?? 'no outcome')}`}\n`);
  process.exitCode = exitCode(stop, outcome !== undefined && report.results.every((r) => r.ok));
}

import { Command, Option } from 'commander';
import { AGGREGATE_NAMES, broadcast } from '../../core/index.ts';
import { aggregated, type AggregateName } from '../aggregates.ts';
import { byEndpoint, failureLines } from '../failures.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { claimResults, writeRows } from '../output.ts';
import { addGenerationOptions, addSwarmOptions, int, narrowed, runOptions, type GenerationFlags, type SwarmFlags } from '../options.ts';
import { watchRun } from '../progress.ts';
import { addDetachOptions, detach, type DetachFlags } from '../detached/detach.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';
import { addDrainBeforeOption, jobOfRun, jobStopLine, jobWatch, type JobRunFlags } from '../job-run.ts';

interface BroadcastFlags extends SwarmFlags, GenerationFlags, ReachFlags, DetachFlags, JobRunFlags {
  prompt: string;
  aggregate?: AggregateName;
  k: number;
  out?: string;
  quiet?: boolean;
}

export function broadcastCommand(): Command {
  const cmd = new Command('broadcast')
    .description('ask every endpoint the same prompt (chat); prints each answer as a JSONL row, or with --aggregate one aggregate of them (rows then go to --out)')
    .requiredOption('--prompt <text>', 'the prompt')
    .addOption(new Option('--aggregate <how>', 'vote (winner, confidence, distribution), concat, best-of / top-k (by length), merge (JSON answers into one list), stats (numeric answers)').choices(AGGREGATE_NAMES))
    .option('--k <k>', 'answers kept by --aggregate top-k', int('--k', 1, 100_000), 3)
    .option('--out <file>', 'the answers as JSONL (default with no --aggregate: stdout)')
    .option('--quiet', 'no progress bar or summary on stderr (warnings still show)');
  addSwarmOptions(cmd);
  addReachOptions(cmd);
  addDetachOptions(cmd);
  addDrainBeforeOption(cmd);
  addGenerationOptions(cmd);
  return cmd.action(async (flags: BroadcastFlags) => {
    if (flags.detach) return detach('broadcast', flags);
    const job = await jobOfRun(flags);
    const lock = flags.out ? await claimResults(flags.out, [['--hostfile', flags.hostfile]], { flag: '--out' }) : undefined;
    const stop = claimStop();
    const swarm = await openUnlessStopped(flags, stop);
    if (!swarm) return;
    const run = broadcast(narrowed(swarm.pool, flags), flags.prompt, runOptions(flags));
    const report = await watchRun(run, 'broadcast', Boolean(flags.quiet), stop, jobWatch(flags, job, swarm));
    await swarm.close();
    const stoppedByJob = jobStopLine(report, "swarm broadcast again on the next job's hostfile");
    if (stoppedByJob) process.stderr.write(`${stoppedByJob}\n`);
    else if (report.error && !report.cancelled) process.stderr.write(`error: ${printable(report.error)}\n`);
    if (flags.out || !flags.aggregate) await writeRows(report.results, flags.out, lock, stop);
    for (const line of failureLines(report.results, (r) => ({ step: 'broadcast', which: byEndpoint(r) }))) process.stderr.write(`${line}\n`);
    if (flags.aggregate) process.stdout.write(`${aggregated(flags.aggregate, report.results, flags.k)}\n`);
    process.exitCode = exitCode(stop, report.results.length > 0 && report.results.every((r) => r.ok));
  });
}

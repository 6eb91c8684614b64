import { access, writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { waitForHealthy, writeHostfile } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { claimStop, exitCode } from '../interrupt.ts';
import { int, num } from '../options.ts';
import { checkOutPath } from '../output.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';

interface WaitFlags extends ReachFlags {
  hostfile?: string;
  output?: string;
  interval: number;
  healthTimeout: number;
  hostfileTimeout?: number;
  minHosts?: number;
  minFraction?: number;
  quiet?: boolean;
}

/** Aurora-Swarm's wait_for_vllm_servers.py: wait for the servers of a job, then write the hostfile of those that came up. */
export function waitCommand(): Command {
  const cmd = new Command('wait')
    .usage('--hostfile FILE [options]')
    .description('poll GET /health until every endpoint is up (or --health-timeout after the first one is), then write a hostfile of the healthy ones')
    .option('--hostfile <file>', 'hostfile of the job (may not exist yet: see --hostfile-timeout)')
    .option('--output <file>', 'hostfile of the healthy endpoints (default: <hostfile>.ready)')
    .option('--interval <seconds>', 'between health rounds', num('--interval', 0.01, 3_600), 10)
    .option('--health-timeout <seconds>', 'how long to wait for the rest after the first endpoint is healthy', num('--health-timeout', 0, 604_800), 1800)
    .option('--hostfile-timeout <seconds>', 'how long to wait for the hostfile to appear (default: forever)', num('--hostfile-timeout', 0, 604_800))
    .option('--min-hosts <n>', 'exit 1 unless at least this many are healthy', int('--min-hosts', 0, 1_000_000))
    .option('--min-fraction <f>', 'exit 1 unless at least this share is healthy', num('--min-fraction', 0, 1))
    .option('--quiet', 'no progress lines');
  addReachOptions(cmd);
  return cmd.action(async (flags: WaitFlags) => {
    if (flags.hostfile) await waitForFile(flags.hostfile, flags.hostfileTimeout);
    const output = flags.output ?? (flags.hostfile ? `${flags.hostfile}.ready` : undefined);
    if (!output) throw new CliError('--output is needed with --remote-hostfile');
    await checkOutPath(output, [['--hostfile', flags.hostfile]], '--output');
    const stop = claimStop();
    const swarm = await openUnlessStopped({ ...flags, tag: [] }, stop);
    if (!swarm) return;
    try {
      const slots = await waitForHealthy(swarm.pool, {
        intervalMs: flags.interval * 1000,
        healthTimeoutMs: flags.healthTimeout * 1000,
        signal: stop.signal,
        onRound: (healthy, total) => !flags.quiet && process.stderr.write(`${healthy}/${total} healthy\n`),
      });
      const ready = slots.map((slot) => swarm.endpoints[slot]!);
      await writeFile(output, writeHostfile(ready));
      const total = swarm.endpoints.length;
      process.stderr.write(`${ready.length}/${total} healthy; wrote ${output}\n`);
      const short = (flags.minHosts !== undefined && ready.length < flags.minHosts) || (flags.minFraction !== undefined && ready.length < flags.minFraction * total);
      if (short) process.stderr.write(`fewer healthy endpoints than required (--min-hosts ${flags.minHosts ?? '-'}, --min-fraction ${flags.minFraction ?? '-'})\n`);
      process.exitCode = exitCode(stop, !short);
    } finally {
      await swarm.close();
    }
  });
}

async function waitForFile(path: string, timeoutSeconds: number | undefined): Promise<void> {
  const deadline = timeoutSeconds === undefined ? Infinity : Date.now() + timeoutSeconds * 1000;
  for (;;) {
    try {
      return await access(path);
    } catch {
      if (Date.now() >= deadline) throw new CliError(`hostfile ${path} did not appear within ${timeoutSeconds} s`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

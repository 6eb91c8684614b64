import { access, writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { cappedList, endpointId, GrowingHostfile, HostfileError, waitForHealthy, STATUS_LABELS, writeHostfile, type Endpoint, type EndpointHealthReport, type SwarmPool, type WaitOutcome } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { printable } from '../format.ts';
import { claimStop, exitCode, type Stop } from '../interrupt.ts';
import { int, num } from '../options.ts';
import { checkOutPath } from '../output.ts';
import { ServiceAccess } from '../service-access.ts';
import { addReachOptions, directPool, openUnlessStopped, type ReachFlags } from '../swarm.ts';

interface WaitFlags extends ReachFlags {
  hostfile?: string;
  output?: string;
  interval: number;
  healthTimeout: number;
  hostfileTimeout?: number;
  hostfileSettle: number;
  minHosts?: number;
  minFraction?: number;
  quiet?: boolean;
}

/** What a wait ended with: the endpoints it knew last and how they answered. */
interface Waited {
  endpoints: Endpoint[];
  outcome: WaitOutcome;
  /** The hostfile was still being written when the wait ended. */
  growing: boolean;
}

/** Aurora-Swarm's wait_for_vllm_servers.py: wait for the servers of a job, then write the hostfile of those that came up. */
export function waitCommand(): Command {
  const cmd = new Command('wait')
    .usage('--hostfile FILE [options]')
    .description('poll GET /health until every endpoint is up (or --health-timeout after the first one is), then write a hostfile of the healthy ones')
    .option('--hostfile <file>', 'hostfile of the job (may not exist yet: see --hostfile-timeout; may still be growing: see --hostfile-settle)')
    .option('--output <file>', 'hostfile of the healthy endpoints (default: <hostfile>.ready)')
    .option('--interval <seconds>', 'between health rounds', num('--interval', 0.01, 3_600), 10)
    .option('--health-timeout <seconds>', 'how long to wait for the rest after the first endpoint is healthy', num('--health-timeout', 0, 604_800), 1800)
    .option('--hostfile-timeout <seconds>', 'how long to wait for the hostfile to appear (default: forever)', num('--hostfile-timeout', 0, 604_800))
    .option('--hostfile-settle <seconds>', 'the hostfile is read again every round until it ends in a newline and has not changed for this long (its job may still be writing it)', num('--hostfile-settle', 0, 604_800), 10)
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
    // A local hostfile reached directly is read again every round; through an SSH login, once.
    const waited = flags.hostfile && !flags.remoteHostfile && !flags.via ? await waitGrowing(flags, flags.hostfile, stop) : await waitOnce(flags, stop);
    if (!waited) return;
    const { endpoints, outcome } = waited;
    if (outcome.denied) {
      const d = outcome.denied;
      // The error says whose key was refused; with none sent, where one comes from.
      const hint = d.error?.includes('no key was sent') ? '; set SWARM_API_KEY to the key the servers were started with (--api-key), or give the line key=env:NAME' : '';
      throw new CliError(`${d.endpoint} refused our credentials (HTTP ${d.denied}): ${printable(d.error ?? '')}${hint}`);
    }
    const ready = endpoints.filter((e) => outcome.healthy.has(endpointId(e)));
    await writeFile(output, writeHostfile(ready));
    const total = endpoints.length;
    process.stderr.write(`${ready.length}/${total} healthy; wrote ${output}\n`);
    const down = endpoints.filter((e) => !outcome.healthy.has(endpointId(e)));
    if (down.length) {
      const last = new Map(outcome.reports.map((r) => [r.endpoint, r]));
      process.stderr.write(`${down.length} stayed down:\n${cappedList(down, (e) => `  ${endpointId(e)}${why(last.get(endpointId(e)))}`)}\n`);
    }
    if (waited.growing) process.stderr.write(`the hostfile ${flags.hostfile} was still changing when the wait ended\n`);
    const short = (flags.minHosts !== undefined && ready.length < flags.minHosts) || (flags.minFraction !== undefined && ready.length < flags.minFraction * total);
    if (short) process.stderr.write(`fewer healthy endpoints than required (--min-hosts ${flags.minHosts ?? '-'}, --min-fraction ${flags.minFraction ?? '-'})\n`);
    process.exitCode = exitCode(stop, !short);
  });
}

const why = (r: EndpointHealthReport | undefined) => (r ? ` (${STATUS_LABELS[r.status]}${r.error ? `: ${printable(r.error)}` : ''})` : '');

const rounds = (flags: WaitFlags, stop: Stop, note: () => string = () => '') => ({
  intervalMs: flags.interval * 1000,
  healthTimeoutMs: flags.healthTimeout * 1000,
  signal: stop.signal,
  onRound: (healthy: number, total: number) => !flags.quiet && process.stderr.write(`${healthy}/${total} healthy${note()}\n`),
});

/** The endpoints of a hostfile read once (a remote one, or through a tunnel), on the swarm opened for them. */
async function waitOnce(flags: WaitFlags, stop: Stop): Promise<Waited | undefined> {
  const swarm = await openUnlessStopped({ ...flags, tag: [] }, stop);
  if (!swarm) return undefined;
  try {
    return { endpoints: swarm.endpoints, outcome: await waitForHealthy(swarm.pool, rounds(flags, stop)), growing: false };
  } finally {
    await swarm.close();
  }
}

/**
 * The endpoints of a hostfile its job may still be writing: read again before every round, a new
 * pool whenever its endpoints change, the wait over only once the file is final.
 */
async function waitGrowing(flags: WaitFlags, path: string, stop: Stop): Promise<Waited> {
  const file = new GrowingHostfile(path, flags.hostfileSettle * 1000);
  const access = new ServiceAccess(flags);
  let endpoints: Endpoint[] = [];
  let pool: SwarmPool | undefined;
  let final = false;
  const refresh = async () => {
    const read = await file.read().catch((err: unknown) => {
      throw new CliError(err instanceof HostfileError ? err.message : (err as Error).message);
    });
    if (!pool || JSON.stringify(read.endpoints) !== JSON.stringify(endpoints)) {
      for (const w of read.warnings) process.stderr.write(`warning: ${printable(String(w))}\n`);
      await pool?.close();
      endpoints = read.endpoints;
      pool = directPool(endpoints, { tag: [], ...flags }, await access.poolOptions(endpoints));
    }
    final = read.final;
    return { pool, final };
  };
  try {
    const first = await refresh();
    const outcome = await waitForHealthy(first.pool, { ...rounds(flags, stop, () => (final ? '' : ` (${path} still being written)`)), refresh });
    return { endpoints, outcome, growing: !final };
  } finally {
    await pool?.close();
  }
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

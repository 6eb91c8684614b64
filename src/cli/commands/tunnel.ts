import { writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { checkHealth, STATUS_LABELS, writeHostfile } from '../../core/index.ts';
import { CliError, signalExit } from '../exit.ts';
import { printable } from '../format.ts';
import { claimStop, stopped } from '../interrupt.ts';
import { checkOutPath } from '../output.ts';
import { addReachOptions, openUnlessStopped, type ReachFlags } from '../swarm.ts';

interface TunnelFlags extends ReachFlags {
  hostfile?: string;
  socksMode?: boolean;
  forward?: boolean;
  out?: string;
}

/** `swarm tunnel`: one SSH login carrying every endpoint, kept open until Ctrl-C, for other tools to use. */
export function tunnelCommand(): Command {
  const cmd = new Command('tunnel')
    .usage('--via [USER@]HOST --hostfile FILE [options]')
    .description('log in once to the login node and carry every endpoint over it (a forward each, or one SOCKS proxy) until Ctrl-C')
    .option('--hostfile <file>', 'hostfile of the compute-node endpoints')
    .option('--socks', 'one SOCKS5 proxy (ssh -D) for every endpoint (default above 64 endpoints)')
    .option('--forward', 'a local forward (ssh -L) per endpoint (default up to 64 endpoints)')
    .option('--out <file>', 'forward mode: write a hostfile of the local addresses (same order and tags) for other tools');
  addReachOptions(cmd, false);
  return cmd.action(async (raw: TunnelFlags & { socks?: boolean }) => {
    if (!raw.via) throw new CliError('swarm tunnel needs --via [user@]login-host');
    if (raw.socks && raw.forward) throw new CliError('give one of --socks and --forward');
    const flags: TunnelFlags = { ...raw, socks: undefined, tunnelMode: raw.socks ? 'socks' : raw.forward ? 'forward' : 'auto' };
    if (flags.out) await checkOutPath(flags.out, [['--hostfile', flags.hostfile]]);
    const stop = claimStop();
    const swarm = await openUnlessStopped({ ...flags, tag: [] }, stop);
    if (!swarm) return;
    const tunnel = swarm.tunnel!;
    // Nothing else holds the event loop while we wait (the master runs on its own): hold it ourselves.
    const keepAlive = setInterval(() => {}, 1 << 30);
    try {
      if (tunnel.mode === 'forward' && flags.out) await writeFile(flags.out, writeHostfile(tunnel.localEndpoints()));
      // Ready means served over HTTP, not just a listening forward (which accepts even when vLLM is down).
      const reports = await checkHealth(swarm.pool);
      for (const r of reports.filter((r) => r.status !== 'up')) process.stderr.write(`  ${r.endpoint}: ${STATUS_LABELS[r.status]}${r.error ? ` (${printable(r.error)})` : ''}\n`);
      const healthy = reports.filter((r) => r.status === 'up').length;
      const where = tunnel.mode === 'socks' ? `SOCKS5 proxy ${tunnel.socksAddress}` : flags.out ? `local hostfile ${flags.out}` : 'local forwards';
      process.stdout.write(`ready: ${swarm.endpoints.length} endpoint(s) through ${tunnel.label} (${tunnel.mode}: ${where}); ${healthy} healthy\n`);
      // The tunnel reconnects on its own on the same local ports (see openSwarm); we wait for Ctrl-C.
      await stopped(stop);
      if (stop.by()) process.exitCode = signalExit(stop.by()!);
    } finally {
      clearInterval(keepAlive);
      await swarm.close();
      process.stderr.write('tunnel closed\n');
    }
  });
}

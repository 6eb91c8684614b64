import { writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { checkHealth, writeHostfile } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { addReachOptions, openSwarm, type ReachFlags } from '../swarm.ts';

interface TunnelFlags extends ReachFlags {
  hostfile?: string;
  socksMode?: boolean;
  forward?: boolean;
  out?: string;
}

/** `swarm tunnel`: one SSH login carrying every endpoint, kept open until Ctrl-C, for other tools to use. */
export function tunnelCommand(): Command {
  const cmd = new Command('tunnel')
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
    const swarm = await openSwarm({ ...flags, tag: [] });
    const tunnel = swarm.tunnel!;
    // Nothing else holds the event loop while we wait (the master runs on its own): hold it ourselves.
    const keepAlive = setInterval(() => {}, 1 << 30);
    const stopped = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    try {
      if (tunnel.mode === 'forward' && flags.out) await writeFile(flags.out, writeHostfile(tunnel.localEndpoints()));
      // Ready means served over HTTP, not just a listening forward (which accepts even when vLLM is down).
      const reports = await checkHealth(swarm.pool);
      for (const r of reports.filter((r) => r.status !== 'healthy')) process.stderr.write(`  ${r.endpoint}: ${r.status}${r.error ? ` (${r.error})` : ''}\n`);
      const healthy = reports.filter((r) => r.status === 'healthy').length;
      const where = tunnel.mode === 'socks' ? `SOCKS5 proxy ${tunnel.socksAddress}` : flags.out ? `local hostfile ${flags.out}` : 'local forwards';
      process.stdout.write(`ready: ${swarm.endpoints.length} endpoint(s) through ${tunnel.label} (${tunnel.mode}: ${where}); ${healthy} healthy\n`);
      tunnel.on('down', (why) => void reconnect(why));
      let reconnecting = false;
      async function reconnect(why: string): Promise<void> {
        if (reconnecting) return;
        reconnecting = true;
        process.stderr.write(`ssh connection lost (${why}); reconnecting\n`);
        for (let delay = 1_000; ; delay = Math.min(delay * 2, 30_000)) {
          try {
            await tunnel.reconnect({ interactive: Boolean(process.stdin.isTTY) });
            swarm.pool.forget();
            process.stderr.write('reconnected\n');
            break;
          } catch (err) {
            process.stderr.write(`reconnect failed: ${(err as Error).message}; next try in ${delay / 1000} s\n`);
            await new Promise((r) => setTimeout(r, delay).unref());
          }
        }
        reconnecting = false;
      }
      await stopped;
    } finally {
      clearInterval(keepAlive);
      await swarm.close();
      process.stderr.write('tunnel closed\n');
    }
  });
}

import { Command } from 'commander';
import { checkHealth, STATUS_LABELS } from '../../core/index.ts';
import { EXIT } from '../exit.ts';
import { columns, printable, terminalSafe } from '../format.ts';
import { num } from '../options.ts';
import { addReachOptions, openSwarm, type ReachFlags } from '../swarm.ts';

interface HealthFlags extends ReachFlags {
  hostfile?: string;
  json?: boolean;
  timeout: number;
}

export function healthCommand(): Command {
  const cmd = new Command('health')
    .usage('--hostfile FILE [options]')
    .description('ask every endpoint GET /health and GET /v1/models: status, served model, max_model_len, latency')
    .option('--hostfile <file>', 'hostfile to check')
    .option('--json', 'one JSON object per endpoint, one per line')
    .option('--timeout <seconds>', 'deadline per request', num('--timeout', 0.001, 3_600), 10);
  addReachOptions(cmd);
  return cmd.action(async (flags: HealthFlags) => {
    const swarm = await openSwarm({ ...flags, tag: [], timeout: undefined }, { pool: { lookupTimeoutMs: flags.timeout * 1000 } });
    const reports = await checkHealth(swarm.pool);
    await swarm.close();
    if (flags.json) {
      for (const r of reports) process.stdout.write(`${terminalSafe(JSON.stringify(r), true)}\n`);
    } else {
      const rows = reports.map((r) => [
        r.endpoint,
        STATUS_LABELS[r.status],
        printable(r.models.map((m) => m.id).join(',')) || '-', // the server's own names: anything may be in them
        r.models[0]?.maxModelLen?.toString() ?? '-',
        r.latencyMs === null ? '-' : `${r.latencyMs.toFixed(1)} ms`,
        printable(r.error ?? ''),
      ]);
      const head = ['ENDPOINT', 'STATUS', 'MODEL', 'MAX_MODEL_LEN', 'LATENCY', 'ERROR'];
      process.stdout.write(`${columns([head, ...rows])}\n`);
      const healthy = reports.filter((r) => r.status === 'up').length;
      process.stderr.write(`${healthy}/${reports.length} healthy\n`);
    }
    process.exitCode = reports.every((r) => r.status === 'up') ? EXIT.ok : EXIT.failed;
  });
}

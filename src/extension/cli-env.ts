import { readFile } from 'node:fs/promises';
import { secretEnvName } from '../core/process/secret-env.ts';
import type { Services } from './services.ts';

/** The variables the bundled CLI keeps from the editor's environment (no settings, no secrets of ours). */
const KEPT = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SWARM_API_KEY', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SLURM_CONF'];

/**
 * The environment of a CLI process the editor starts (a detached run, a resume): the editor's
 * Node (Electron run as Node), the few variables above, and the keys the run's endpoints need from
 * the editor's secret storage — the default key as SWARM_API_KEY (unless the environment has one),
 * and each `key=secret:NAME` of `hostfile` under secretEnvName(NAME). Keys go nowhere else: no
 * argument, setting or log line names them.
 */
export async function cliEnv(services: Services, hostfile: string | undefined): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { ELECTRON_RUN_AS_NODE: '1', NO_COLOR: '1' };
  for (const name of KEPT) if (process.env[name] !== undefined) env[name] = process.env[name];
  if (!env.SWARM_API_KEY) {
    const key = await services.keys.get();
    if (key) env.SWARM_API_KEY = key;
  }
  const text = hostfile ? await readFile(hostfile, 'utf8').catch(() => '') : '';
  for (const m of text.matchAll(/key=secret:([A-Za-z0-9._-]+)/g)) {
    const key = await services.keys.get(m[1]!);
    if (key) env[secretEnvName(m[1]!)] = key;
  }
  return env;
}

/** The value of `flag` in a run's command (`--hostfile PATH` or `--hostfile=PATH`). */
export function flagValue(command: readonly string[], flag: string): string | undefined {
  for (let i = 0; i < command.length; i++) {
    if (command[i] === flag) return command[i + 1];
    if (command[i]!.startsWith(`${flag}=`)) return command[i]!.slice(flag.length + 1);
  }
  return undefined;
}

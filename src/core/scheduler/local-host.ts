import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { runCommand } from '../process/run-command.ts';
import { childEnv } from '../tunnels/child-env.ts';
import type { JobHost } from './host.ts';

/**
 * Where the scheduler clients find their cluster: Slurm's config file, PBS's config and server.
 * Added to ssh's allowlist (childEnv) and nothing more: a submitted job inherits the submitting
 * environment (sbatch --export=ALL is the default), so a secret left out here stays out of the job.
 */
const SCHEDULER_KEYS = ['SLURM_CONF', 'PBS_CONF_FILE', 'PBS_SERVER'];

export function schedulerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const kept = childEnv(env);
  for (const key of SCHEDULER_KEYS) if (env[key] !== undefined) kept[key] = env[key];
  return kept;
}

/** The scheduler on this machine: under Remote-SSH on the login node, or a cluster of one in tests. */
export function localHost(env: NodeJS.ProcessEnv = process.env): JobHost {
  return {
    label: 'this machine',
    run: (argv, options = {}) => runCommand(argv, schedulerEnv(env), options),
    readText: async (path) => {
      try {
        return await readFile(path, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
    writeText: async (path, text) => {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
    },
    home: async () => homedir(),
  };
}

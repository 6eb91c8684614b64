import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { childEnv } from '../tunnels/child-env.ts';
import type { CommandResult, JobHost } from './host.ts';

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
    run: (argv, options = {}) => runLocal(argv, schedulerEnv(env), options),
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

function runLocal(argv: readonly string[], env: NodeJS.ProcessEnv, options: { input?: string; timeoutMs?: number }): Promise<CommandResult> {
  const [command, ...args] = argv;
  return new Promise((resolve) => {
    const child = spawn(command!, args, { shell: false, env, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], timeout: options.timeoutMs ?? 60_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.input);
    // A missing client (no sbatch on this machine) is an answer too: exit 127, as a shell would say.
    child.once('error', (err) => resolve({ code: 127, stdout, stderr: `cannot run ${command}: ${err.message}` }));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

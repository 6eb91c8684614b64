import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { readStatus, STATUS_FILE } from '../../core/index.ts';
import { signalExit } from '../exit.ts';
import { LOG_FILE, OUTPUT_FILE, specPath, type RunSpec, type StartReply } from './spec.ts';

/** The variables a run keeps from the starter's environment: where things are, locale, proxies (site settings), CAs; and, started from the editor, that its `process.execPath` is Electron run as Node. */
const KEPT = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'http_proxy', 'https_proxy', 'no_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SWARM_DEBUG', 'ELECTRON_RUN_AS_NODE'];
/** The scheduler's variables: which job and allocation this is, and where its configuration is. */
const JOB_VARIABLE = /^(SLURM_|PBS_)/;
/** How long the starter waits for the run to begin sending (reading a million prompts, asking the servers' models). */
const BEGIN_MS = 120_000;

/**
 * Starts the run described by `<folder>/spec.json` here, detached: its own session (setsid, so no
 * hang-up from a closing terminal or ssh session reaches it), no shell, stdin from /dev/null,
 * stdout and stderr to files in its folder, the environment scrubbed to what a run needs plus the
 * keys it is given. Waits until it begins sending or ends (bad input is then reported at once,
 * not found later in a log), and leaves it running.
 */
export async function startDetached(folder: string, keys: Record<string, string>, script = process.argv[1]!): Promise<StartReply> {
  const dir = resolve(folder);
  const spec = JSON.parse(readFileSync(specPath(dir), 'utf8')) as RunSpec;
  const env: NodeJS.ProcessEnv = { NO_COLOR: '1' };
  for (const name of KEPT) if (process.env[name] !== undefined) env[name] = process.env[name];
  // Inside a job, its launcher (srun, mpiexec) needs the job's variables to start a sharded run's ranks in it.
  for (const [name, value] of Object.entries(process.env)) if (JOB_VARIABLE.test(name) && value !== undefined) env[name] = value;
  Object.assign(env, keys, { SWARM_RUN_DIR: dir, SWARM_RUN_ID: spec.id, ...(spec.results ? { SWARM_RUN_RESULTS: resolve(dir, spec.results) } : {}) });
  const out = openSync(join(dir, OUTPUT_FILE), 'a');
  const log = openSync(join(dir, LOG_FILE), 'a');
  // A sharded run is started by its own internal command, which starts the shards and merges them.
  const argv = spec.shards ? ['run-shards', dir] : spec.argv;
  const child = spawn(process.execPath, [resolve(script), ...argv], { cwd: resolve(dir, spec.cwd ?? '.'), env, detached: true, stdio: ['ignore', out, log] });
  closeSync(out);
  closeSync(log);
  let exit: number | undefined;
  const exited = new Promise<void>((done) => child.once('exit', (code, signal) => ((exit = signal ? signalExit(signal) : (code ?? 1)), done())));
  const spawned = await new Promise<boolean>((ok) => {
    child.once('spawn', () => ok(true));
    child.once('error', () => ok(false));
  });
  if (!spawned || !child.pid) throw new Error(`cannot start ${process.execPath}`);
  const pid = child.pid;
  const deadline = Date.now() + BEGIN_MS;
  for (;;) {
    const status = readStatus(join(dir, STATUS_FILE));
    if (exit !== undefined || status?.state === 'finished') {
      await exited;
      const tail = readFileSync(join(dir, LOG_FILE), 'utf8').split('\n').filter(Boolean).slice(-5).join('\n');
      return { id: spec.id, folder: dir, pid, state: 'finished', exitCode: status?.exitCode ?? exit!, log: tail };
    }
    if (status?.state === 'running' || Date.now() > deadline) {
      child.unref();
      return { id: spec.id, folder: dir, pid, state: status?.state ?? 'starting' };
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 100))]);
  }
}

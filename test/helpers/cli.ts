/**
 * Helpers for end-to-end tests of the BUILT `swarm` CLI: every command runs as a child process
 * (`node bin/swarm.js …`, no shell) and talks real loopback HTTP to `swarm sim` child processes.
 * Every child spawned here is tracked so `killAll()` can stop whatever a failed test left behind.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { freeLocalPort } from '../../src/core/tunnels/local-port.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { patience, until } from './patience.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = join(ROOT, 'bin', 'swarm.js');
const DIST = join(ROOT, 'dist', 'cli.js');

const children = new Set<ChildProcess>();

/** Builds dist/cli.js when it is missing or older than any source file, so the tests never run a stale bundle. */
export function ensureBuilt(): void {
  const newestSource = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
      const p = join(dir, e.name);
      return Math.max(m, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
    }, 0);
  if (existsSync(DIST) && statSync(DIST).mtimeMs >= newestSource(join(ROOT, 'src'))) return;
  const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`npm run build failed:\n${built.stdout}${built.stderr}`);
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Extra environment variables for the child (on top of this process's). */
  env?: Record<string, string | undefined>;
  /** The child is killed (SIGKILL) and the promise rejects after this long. */
  timeoutMs?: number;
  /** Where the command runs (default: the repository), e.g. a folder of its own for `swarm launch`'s .swarm/jobs. */
  cwd?: string;
}

/** Environment for children: no inherited SWARM_API_KEY unless a test sets one. */
function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, SWARM_API_KEY: undefined, NO_COLOR: '1', ...extra };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  return env;
}

/** Starts `swarm …` without waiting; the caller owns it (it is also tracked for killAll). */
export function spawnCli(args: readonly string[], options: RunOptions = {}): ChildProcess {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Collects a child's output and waits for it to exit; kills it and rejects on timeout. */
export function finished(child: ChildProcess, what: string, timeoutMs = 20_000): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    const limit = patience(timeoutMs);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not exit within ${limit} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, limit);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Runs `swarm …` to completion. */
export function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  return finished(spawnCli(args, options), `swarm ${args.join(' ')}`, options.timeoutMs);
}

/** A `swarm sim` child process and what it wrote. */
export interface Sim {
  child: ChildProcess;
  hostfile: string;
  /** The hostfile's lines as written, `127.0.0.1<TAB>port`. */
  lines: string[];
  /** `host:port` of each server, in hostfile order. */
  endpoints: string[];
  /** The `ready` line it printed. */
  ready: string;
  stop(): Promise<void>;
}

/** Starts `swarm sim --endpoints N --hostfile <dir>/<name> …flags` and waits for its `ready` line. */
export async function startSim(dir: string, name: string, endpoints: number, flags: readonly string[] = [], env: RunOptions['env'] = {}, timeoutMs = 10_000): Promise<Sim> {
  const hostfile = join(dir, name);
  // Latency zeroed unless a test asks otherwise (later flags win in commander).
  const args = ['sim', '--endpoints', String(endpoints), '--hostfile', hostfile, '--ttft-ms', '0', '--tpot-ms', '0', '--request-overhead-ms', '0', ...flags];
  const child = spawnCli(args, { env });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await new Promise<string>((resolve, reject) => {
    let settled = false;
    const limit = patience(timeoutMs);
    const timer = setTimeout(() => fail(`no "ready" within ${limit} ms`), limit);
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`swarm ${args.join(' ')}: ${why}\nstdout: ${stdout}\nstderr: ${stderr}`));
    };
    child.stdout!.on('data', (d: string) => {
      stdout += d;
      const line = stdout.split('\n').find((l) => l.includes('ready'));
      if (line !== undefined && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve(line);
      }
    });
    child.once('exit', (code, signal) => fail(`exited early (${code ?? signal})`));
  });
  const text = await readFile(hostfile, 'utf8');
  const lines = text.split('\n').filter((l) => l !== '');
  const sim: Sim = {
    child,
    hostfile,
    lines,
    endpoints: lines.map((l) => l.split('\t').slice(0, 2).join(':')),
    ready,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(killer);
    },
  };
  return sim;
}

/** Stops every child still running (for `after`). */
export async function killAll(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const killer = setTimeout(() => child.kill('SIGKILL'), 3000);
          child.once('exit', () => {
            clearTimeout(killer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

/**
 * A built CLI and a temp dir for the tests of this file (or of the describe block it is called in):
 * made before them; every child still running is stopped and the dir removed after them.
 */
export function suiteDir(): { readonly dir: string } {
  const suite = { dir: '', cleanup: async () => {} };
  before(async () => {
    ensureBuilt();
    ({ dir: suite.dir, cleanup: suite.cleanup } = await tempDir());
  });
  after(async () => {
    await killAll();
    await suite.cleanup();
  });
  return suite;
}

/** As suiteDir, with `swarm sim --endpoints count …flags` started in it before the tests. */
export function suiteSim(name: string, count: number, flags: readonly string[] = []): { readonly dir: string; readonly sim: Sim } {
  const suite = suiteDir() as { dir: string; sim: Sim };
  before(async () => {
    suite.sim = await startSim(suite.dir, name, count, [...flags]);
  });
  return suite;
}

/** A fresh temp dir, removed by the returned cleanup. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'swarm-cli-test-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function writeText(dir: string, name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

/** A loopback port nothing listens on (bound, then released). */
export const closedPort = freeLocalPort;

/** `GET /metrics` of one sim server (`host:port`), from outside. */
export async function scrape(endpoint: string): Promise<string> {
  const res = await fetch(`http://${endpoint}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (res.status !== 200) throw new Error(`GET ${endpoint}/metrics answered ${res.status}`);
  return res.text();
}

/**
 * `http_requests_total{handler,method,status}` from vLLM-style Prometheus text, summed over the
 * status classes given (all of them when none). A series that is absent counts 0.
 */
export function httpRequests(metrics: string, handler: string, method: string, statuses?: readonly string[]): number {
  let total = 0;
  for (const line of metrics.split('\n')) {
    const m = /^http_requests_total\{([^}]*)\}\s+(\S+)$/.exec(line.trim());
    if (!m) continue;
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (labels.handler !== handler || labels.method !== method) continue;
    if (statuses && !statuses.includes(labels.status!)) continue;
    total += Number(m[2]);
  }
  return total;
}

export interface RequestCounts {
  completions2xx: number;
  completionsAll: number;
  chat2xx: number;
  chatAll: number;
}

/** Generation POSTs one sim server has answered, by handler. */
export async function requestCounts(endpoint: string): Promise<RequestCounts> {
  const text = await scrape(endpoint);
  return {
    completions2xx: httpRequests(text, '/v1/completions', 'POST', ['2xx']),
    completionsAll: httpRequests(text, '/v1/completions', 'POST'),
    chat2xx: httpRequests(text, '/v1/chat/completions', 'POST', ['2xx']),
    chatAll: httpRequests(text, '/v1/chat/completions', 'POST'),
  };
}

/** Parses JSONL output (one object per non-empty line). */
export function jsonLines<T = Record<string, any>>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l) as T;
      } catch (err) {
        throw new Error(`line ${i + 1} is not JSON (${(err as Error).message}): ${l.slice(0, 200)}`);
      }
    });
}

/** Polls `probe` until it returns something other than undefined (null and false are answers too). */
export function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
  return until(probe, what, timeoutMs, { ready: (v) => v !== undefined, intervalMs: 20 }) as Promise<T>;
}

/**
 * Until node has run the first lines of bin/swarm.js, SIGINT kills it as it would any process; from
 * then on the CLI handles it. Linux shows that moment in /proc: its SIGHUP handler is set (node's
 * own start-up catches SIGINT but never SIGHUP).
 */
export async function handlesSignals(pid: number): Promise<void> {
  for (;;) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1];
    if (caught && (BigInt(`0x${caught}`) & 1n) !== 0n) return;
    await new Promise((r) => setImmediate(r));
  }
}

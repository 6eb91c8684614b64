/**
 * A REAL VS Code for tests: code-server 4.99.4 (VS Code 1.99.3) installed from the npm registry by
 * scripts/install-code-server.sh (shared notes, testing-offline §1b/§1e/§4).
 *
 * Every server gets its own private temp dir (/tmp/cs-XXXXXX, short on purpose: Unix socket paths max out
 * at 108 bytes) holding its --config file, --user-data-dir, --extensions-dir, XDG_CONFIG_HOME,
 * XDG_DATA_HOME and TMPDIR, so nothing touches $HOME or litters /tmp. It runs detached in its own session
 * and process group; stop() ends that whole tree and removes the temp dir. Servers still running when
 * the test process exits or gets SIGINT/SIGTERM/SIGHUP are killed too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { freeLocalPort } from '../../src/core/tunnels/local-port.ts';
import { constants as osConstants, homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { patience } from './patience.ts';

export const CODE_SERVER_VERSION = '4.99.4';
/** Where scripts/install-code-server.sh put code-server. */
export const CODE_SERVER_DIR =
  process.env.SWARM_CODE_SERVER_DIR || join(homedir(), '.cache', 'swarm-lab', `code-server-${CODE_SERVER_VERSION}`);
const MARKER = join(CODE_SERVER_DIR, '.swarm-lab-installed');
const ENTRY = join(CODE_SERVER_DIR, 'node_modules', 'code-server', 'out', 'node', 'entry.js');

/** Whether scripts/install-code-server.sh finished (its marker file exists). */
export const codeServerAvailable: boolean = existsSync(MARKER) && existsSync(ENTRY);

/** Settings every test server starts with (tests' userSettings are merged on top). */
export const DEFAULT_USER_SETTINGS: Readonly<Record<string, unknown>> = {
  'workbench.startupEditor': 'none', // the walkthrough steals focus from an open palette
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.tips.enabled': false,
  'remote.autoForwardPorts': false, // other processes' ports raise toasts otherwise
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'git.openRepositoryInParentFolders': 'never',
  'workbench.enableExperiments': false,
};

export interface CodeServer {
  /** http://127.0.0.1:PORT (no trailing slash). */
  url: string;
  port: number;
  /** Kills the whole process tree (SIGTERM, wait, SIGKILL) and removes the private temp dir. Idempotent. */
  stop(): Promise<void>;
  /** code-server's stdout and stderr so far. */
  logs(): string;
  /** What our extension wrote to its output channel ("Swarm Lab") so far: what a failed test should show. */
  extensionLog(): string;
}

export interface StartOptions {
  /** The folder the workbench opens (also passed on code-server's command line). */
  workspace: string;
  /** Merged over DEFAULT_USER_SETTINGS into <user-data-dir>/User/settings.json. */
  userSettings?: Record<string, unknown>;
  /**
   * <user-data-dir>/Machine/settings.json: the remote settings of this window ("Remote" in the Settings
   * editor, where it writes `machine` and `machine-overridable` settings). code-server's window is a
   * remote one, so a `machine-overridable` setting belongs here: from User/settings.json a reloaded window
   * read one empty in 4 of 20 reloads at load 8-9 (and from here in none), as VS Code keeps such User
   * values out of a remote window.
   */
  machineSettings?: Record<string, unknown>;
  /** Extensions dir (e.g. one installVsix() filled); default: an empty one in the private temp dir. */
  extensionsDir?: string;
  /** Extra environment for code-server and so for its extension host. */
  env?: Record<string, string>;
  /** How long to wait for /healthz; default 30 s. */
  readyTimeoutMs?: number;
}

// ---------------------------------------------------------------------------------------------------
// Process-tree bookkeeping through /proc (zombies still answer kill(-pgid, 0): read their state instead)

interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  state: string;
  start: string;
}

function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // comm may contain spaces
    return { pid, state: rest[0]!, ppid: +rest[1]!, pgrp: +rest[2]!, session: +rest[3]!, start: rest[19]! };
  } catch {
    return undefined;
  }
}

function allProcs(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProc(+name);
    if (p) out.push(p);
  }
  return out;
}

/** Every process in `root`'s session or process group, plus all its descendants (which may have setsid'd). */
export function processTree(root: number): ProcInfo[] {
  const procs = allProcs();
  const byParent = new Map<number, ProcInfo[]>();
  for (const p of procs) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const found = new Map<number, ProcInfo>();
  for (const p of procs) if (p.session === root || p.pgrp === root || p.pid === root) found.set(p.pid, p);
  const queue = [...found.keys()];
  while (queue.length) {
    for (const c of byParent.get(queue.pop()!) ?? []) {
      if (!found.has(c.pid)) {
        found.set(c.pid, c);
        queue.push(c.pid);
      }
    }
  }
  return [...found.values()];
}

/** Running (non-zombie) processes other than this one whose command line mentions `needle`. */
export function pidsMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || +name === process.pid) continue;
    try {
      const p = readProc(+name);
      if (!p || p.state === 'Z' || p.state === 'X') continue;
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle)) out.push(+name);
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Still running: exists, same start time (not a reused pid), and not a zombie. */
function alive(p: ProcInfo): boolean {
  const now = readProc(p.pid);
  return !!now && now.start === p.start && now.state !== 'Z' && now.state !== 'X';
}

function signalAll(root: number, procs: ProcInfo[], sig: NodeJS.Signals): void {
  try {
    process.kill(-root, sig);
  } catch {
    /* group gone */
  }
  for (const p of procs) {
    if (!alive(p)) continue;
    try {
      process.kill(p.pid, sig);
    } catch {
      /* gone */
    }
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Ends a detached process tree: SIGTERM to the group and every member (snapshotted first, as orphans
 * lose their ancestry), waits up to `graceMs`, then SIGKILL. Resolves when nothing of it runs any more.
 */
export async function killTree(root: number, graceMs = 3_000): Promise<void> {
  let procs = processTree(root);
  signalAll(root, procs, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    procs = [...procs, ...processTree(root)].filter(alive);
    if (procs.length === 0) return;
    await sleep(50);
  }
  signalAll(root, procs, 'SIGKILL');
  const hard = Date.now() + patience(5_000);
  while (Date.now() < hard) {
    procs = procs.filter(alive);
    if (procs.length === 0) return;
    await sleep(50);
  }
  throw new Error(`processes survived SIGKILL: ${procs.map((p) => p.pid).join(', ')}`);
}

// Last-resort cleanup when the test process ends or is interrupted.
const liveTrees = new Map<number, () => void>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  const killAllSync = () => {
    for (const [root, cleanup] of liveTrees) {
      try {
        signalAll(root, processTree(root), 'SIGKILL');
        cleanup();
      } catch {
        /* best effort */
      }
    }
    liveTrees.clear();
    for (const dir of exitDirs) {
      try {
        // e.g. a Chromium profile: its processes would write into it again while it is being removed
        let left = pidsMentioning(dir);
        for (const pid of left) process.kill(pid, 'SIGKILL');
        for (let i = 0; i < 40 && left.length; i++) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
          left = pidsMentioning(dir);
        }
        rmSync(dir, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
    exitDirs.clear();
  };
  process.on('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      killAllSync();
      // Die as the signal asked. Listeners registered after this one (Playwright's SIGTERM handler
      // closes browsers but does not exit) would swallow a re-raised signal: exit outright then.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
      else process.exit(128 + (osConstants.signals[sig] ?? 15));
    });
  }
}

const exitDirs = new Set<string>();
/** Removes `dir` when the test process exits or is interrupted (unless unregistered first). */
export function removeOnExit(dir: string): () => void {
  hookExit();
  exitDirs.add(dir);
  return () => exitDirs.delete(dir);
}

/** Registers a detached tree for killing on exit; returns the unregister function. */
export function trackTree(root: number, cleanupSync: () => void = () => {}): () => void {
  hookExit();
  liveTrees.set(root, cleanupSync);
  return () => liveTrees.delete(root);
}

// ---------------------------------------------------------------------------------------------------


/** A private temp dir with the environment that keeps code-server out of $HOME and /tmp. */
async function privateDirs(): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
  const dir = await mkdtemp('/tmp/cs-');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    XDG_CONFIG_HOME: join(dir, 'xc'),
    XDG_DATA_HOME: join(dir, 'xd'),
    XDG_CACHE_HOME: join(dir, 'xk'),
    TMPDIR: join(dir, 't'),
    // Detached runs started in this window land here, not in ~/.swarm-lab/runs, where every later
    // window's History would list them (CI's panel suite found a run another suite had left there).
    SWARM_RUNS_DIR: join(dir, 'runs'),
    // VS Code's server otherwise runs the user's interactive login shell (`$SHELL -ilc`, 10 s timeout) to
    // resolve an environment for the extension host and terminals: slow or stuck shell rc files (a stale
    // pyenv rehash lock did it here: 10 s per start) and shells killed mid-startup on stop. VSCODE_CLI=1 skips it.
    VSCODE_CLI: '1',
    // Never let code-server's own CLI helpers or a parent VS Code hijack this instance.
    VSCODE_IPC_HOOK_CLI: undefined,
    VSCODE_PROXY_URI: undefined,
    PASSWORD: undefined,
    HASHED_PASSWORD: undefined,
  };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  await Promise.all(['xc', 'xd', 'xk', 't'].map((d) => mkdir(join(dir, d), { recursive: true })));
  return { dir, env };
}

async function healthy(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Starts code-server on a free loopback port (auth none) and resolves once /healthz answers. */
export async function startCodeServer(opts: StartOptions): Promise<CodeServer> {
  if (!codeServerAvailable) throw new Error(`code-server is not installed in ${CODE_SERVER_DIR}: run scripts/install-code-server.sh`);
  const { dir, env } = await privateDirs();
  const removeDir = () => rm(dir, { recursive: true, force: true, maxRetries: 3 });
  try {
    const userDataDir = join(dir, 'ud');
    const extensionsDir = opts.extensionsDir ?? join(dir, 'ext');
    await mkdir(join(userDataDir, 'User'), { recursive: true });
    await mkdir(extensionsDir, { recursive: true });
    await writeFile(
      join(userDataDir, 'User', 'settings.json'),
      JSON.stringify({ ...DEFAULT_USER_SETTINGS, ...opts.userSettings }, null, 2),
    );
    if (opts.machineSettings) {
      await mkdir(join(userDataDir, 'Machine'), { recursive: true });
      await writeFile(join(userDataDir, 'Machine', 'settings.json'), JSON.stringify(opts.machineSettings, null, 2));
    }
    Object.assign(env, opts.env);
    let lastError: Error | undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = await freeLocalPort();
      const config = join(dir, 'config.yaml');
      await writeFile(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
      const args = [
        ENTRY,
        '--config', config,
        '--user-data-dir', userDataDir,
        '--extensions-dir', extensionsDir,
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        opts.workspace,
      ];
      try {
        return await launch(args, env, port, dir, removeDir, opts.readyTimeoutMs ?? 30_000);
      } catch (e) {
        lastError = e as Error;
        if (!/EADDRINUSE/.test(lastError.message)) throw lastError;
      }
    }
    throw lastError!;
  } catch (e) {
    await removeDir();
    throw e;
  }
}

async function launch(
  args: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  dir: string,
  removeDir: () => Promise<void>,
  readyTimeoutMs: number,
): Promise<CodeServer> {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: dir,
    env,
    detached: true, // setsid(): own session and process group
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const root = child.pid!;
  const untrack = trackTree(root, () => rmSync(dir, { recursive: true, force: true }));
  let out = '';
  const append = (b: Buffer) => {
    out += b.toString();
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let exitCode: number | null | undefined;
  child.once('exit', (code, signal) => {
    exitCode = code ?? (signal ? -1 : null);
  });

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      try {
        await killTree(root);
        await Promise.race([exited, sleep(2_000)]);
      } finally {
        untrack();
        await removeDir();
      }
    })());

  readyTimeoutMs = patience(readyTimeoutMs);
  const deadline = Date.now() + readyTimeoutMs;
  // Ours (not some other process that grabbed the port) once it logged the port and /healthz answers.
  const listening = `listening on http://127.0.0.1:${port}/`;
  while (!(out.includes(listening) && exitCode === undefined && (await healthy(port)))) {
    if (exitCode !== undefined || /EADDRINUSE/.test(out)) {
      await killTree(root).catch(() => {});
      untrack();
      throw new Error(`code-server exited before it was ready (code ${exitCode}):\n${out}`);
    }
    if (Date.now() > deadline) {
      await killTree(root).catch(() => {});
      untrack();
      throw new Error(`code-server not ready after ${readyTimeoutMs} ms:\n${out}`);
    }
    await sleep(100);
  }
  return { url: `http://127.0.0.1:${port}`, port, stop, logs: () => out, extensionLog: () => outputChannelLog(join(dir, 'ud', 'logs'), 'Swarm Lab') };
}

/** The files of output channel `name` under a user-data-dir's logs (one per window session), joined. */
function outputChannelLog(logs: string, name: string): string {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(`${name}.log`)) found.push(path);
    }
  };
  try {
    walk(logs);
  } catch {
    return ''; // no logs yet
  }
  return found.sort().map((f) => readFileSync(f, 'utf8')).join('');
}

/**
 * Installs a .vsix into `extensionsDir` with `code-server --install-extension`. A running server does not
 * pick up newly installed extensions: install BEFORE startCodeServer({ extensionsDir }).
 */
export async function installVsix(vsixPath: string, extensionsDir: string): Promise<void> {
  if (!codeServerAvailable) throw new Error(`code-server is not installed in ${CODE_SERVER_DIR}: run scripts/install-code-server.sh`);
  const { dir, env } = await privateDirs();
  try {
    await mkdir(extensionsDir, { recursive: true });
    const config = join(dir, 'config.yaml');
    await writeFile(config, 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');
    const child = spawn(
      process.execPath,
      [ENTRY, '--config', config, '--user-data-dir', join(dir, 'ud'), '--extensions-dir', extensionsDir, '--install-extension', vsixPath, '--force'],
      { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const untrack = trackTree(child.pid!);
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b));
    child.stderr!.on('data', (b: Buffer) => (out += b));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    await killTree(child.pid!).catch(() => {});
    untrack();
    if (code !== 0 || !/successfully installed/i.test(out)) {
      throw new Error(`code-server --install-extension ${vsixPath} failed (exit ${code}):\n${out}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

// ---------------------------------------------------------------------------------------------------

export interface ExtensionHostTestOptions {
  /** Folder of the extension under test (its package.json), loaded as extensionDevelopmentPath. */
  extensionPath: string;
  /** Absolute path of a CommonJS (.cjs/.js) file exporting `run(): Promise<void>` (e.g. dist-test/extension-host.cjs). */
  testsEntry: string;
  /** Folder the workbench opens. */
  workspace: string;
  userSettings?: Record<string, unknown>;
  /** As StartOptions.machineSettings (where `machine-overridable` settings such as `swarmLab.ssh.via` go). */
  machineSettings?: Record<string, unknown>;
  /** Extra environment for the extension host (e.g. SWARM_EXT_TEST_GREP). */
  env?: Record<string, string>;
  /** Whole run, start to exit; default 120 s. */
  timeoutMs?: number;
}

/** Environment variable the extension-host runner (test/extension-host/index.ts) writes its log to. */
export const EXT_TEST_LOG_ENV = 'SWARM_EXT_TEST_LOG';

/**
 * Runs extension tests in code-server's real Node extension host: starts a server, opens the workbench
 * in headless Chromium with `payload` = extensionDevelopmentPath + extensionTestsPath, waits for the
 * workbench's codeAutomationExit(code), and returns that code (0 = run() resolved) with the runner's log
 * (the extension host's console is not visible to the page, so the runner writes a file). Everything it
 * started is stopped before it returns.
 */
export async function runExtensionHostTests(opts: ExtensionHostTestOptions): Promise<{ code: number; log: string }> {
  const { openWorkbench } = await import('./workbench.ts');
  const timeoutMs = patience(opts.timeoutMs ?? 120_000);
  const logDir = await mkdtemp('/tmp/cs-log-');
  const keepLogDir = removeOnExit(logDir);
  const logFile = join(logDir, 'extension-host-tests.log');
  await rm(join(dirname(opts.testsEntry), 'extension-host-tests.log'), { force: true }); // the runner's fallback
  const server = await startCodeServer({
    workspace: opts.workspace,
    userSettings: opts.userSettings ?? {},
    ...(opts.machineSettings ? { machineSettings: opts.machineSettings } : {}),
    env: { ...opts.env, [EXT_TEST_LOG_ENV]: logFile },
  });
  let wb: Awaited<ReturnType<typeof openWorkbench>> | undefined;
  try {
    let onExit!: (code: number) => void;
    const exited = new Promise<number>((r) => (onExit = r));
    wb = await openWorkbench(server, opts.workspace, {
      extensionDevelopmentPath: opts.extensionPath,
      extensionTestsPath: opts.testsEntry,
      beforeGoto: (page) => page.exposeFunction('codeAutomationExit', (code: number) => onExit(Number(code))),
      waitForWorkbench: false,
    });
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]).catch(async (e: Error) => {
      const log = await readLog(logFile, opts.testsEntry);
      throw new Error(
        `extension-host tests did not finish within ${timeoutMs} ms (${e.message}).\n--- test log ---\n${log}\n` +
          `--- browser console ---\n${wb?.consoleLog().slice(-40).join('\n')}\n--- code-server ---\n${server.logs().slice(-8_000)}`,
      );
    });
    clearTimeout(timer);
    const log = await readLog(logFile, opts.testsEntry);
    // A failure says what the extension itself logged (a command that returned nothing logs why).
    return { code, log: code === 0 ? log : `${log}\n--- the extension's log ---\n${server.extensionLog().slice(-8_000)}` };
  } finally {
    await wb?.close();
    await server.stop();
    await rm(logDir, { recursive: true, force: true });
    keepLogDir();
  }
}

/** The runner's log: the file named by the environment variable, else the one it writes next to the entry. */
async function readLog(logFile: string, testsEntry: string): Promise<string> {
  for (const f of [logFile, join(dirname(testsEntry), 'extension-host-tests.log')]) {
    try {
      return await readFile(f, 'utf8');
    } catch {
      /* try next */
    }
  }
  return '(the extension-host test runner wrote no log)';
}

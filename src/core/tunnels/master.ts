import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { destination, targetLabel } from './ssh-args.ts';
import { commonArgs, runSsh, type SshConfig, type SshResult } from './ssh-process.ts';
import { reapMasters } from './strays.ts';

const QUICK_MS = 15_000;
const PID_PROBE_MS = 500;

/** What the extension runs in a terminal for the first, interactive login (one-time password). */
export interface LoginCommand {
  command: string;
  args: string[];
}

export interface ConnectOptions {
  /** Let ssh prompt on this process's terminal. */
  interactive?: boolean;
  /** Run the login elsewhere (a VS Code terminal); connect resolves once the master answers. */
  runLogin?: (login: LoginCommand) => void | Promise<void>;
  loginTimeoutMs?: number;
}

/**
 * One authenticated OpenSSH connection to the login node that every forward rides on. Reuses the
 * user's own ControlMaster when their ~/.ssh/config has one running for this host (no second
 * one-time password); otherwise starts ours on a short, private control path.
 */
export class SshMaster extends EventEmitter<{ down: [string] }> {
  /** Our control socket; undefined while riding the user's own master. */
  private controlPath: string | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  private pidTimer: NodeJS.Timeout | undefined;
  private alive = false;
  private masterPid: number | undefined;
  /** A login under way: a second caller (two tunnels healing at once) waits for it rather than logging in again. */
  private connecting: Promise<void> | undefined;
  /** Users of this one login (a tunnel, a launched job's scheduler); it is stopped when the last lets go. */
  private users = 1;

  constructor(
    readonly config: SshConfig,
    private readonly persistSeconds = 600,
  ) {
    super();
  }

  get label(): string {
    return targetLabel(this.config.target);
  }

  /** True when we started the master (and so must stop it); false when it is the user's. */
  get owned(): boolean {
    return this.controlPath !== undefined;
  }

  /** Our master's control socket, for another process of ours to ride it (no second login); undefined while riding the user's own. */
  get controlSocket(): string | undefined {
    return this.controlPath;
  }

  /** `-S <path>` for our master; nothing for the user's, whose config names its socket. */
  private get control(): string[] {
    return this.controlPath ? ['-S', this.controlPath] : [];
  }

  /**
   * Makes sure a master is up: the user's if one is running, else ours. With `interactive`
   * the login prompts on this terminal; without, the login must not need typing (keys, agent).
   */
  connect(options: ConnectOptions = {}): Promise<void> {
    this.connecting ??= this.login(options).finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async login(options: ConnectOptions): Promise<void> {
    if (!this.controlPath && (await this.usersMasterRunning())) {
      this.alive = true;
      return;
    }
    await this.clearStale();
    try {
      if (options.runLogin) {
        // The caller runs the login where the user can type (a VS Code terminal); we wait for the socket.
        await options.runLogin(this.loginCommand());
        return await this.waitUntilRunning(options.loginTimeoutMs ?? 5 * 60_000);
      }
      const result = await runSsh(this.config, this.masterArgs(), {
        timeoutMs: options.interactive ? 10 * 60_000 : 60_000,
        interactive: Boolean(options.interactive),
      });
      if (result.code !== 0) throw new Error(`ssh login to ${this.label} failed (exit ${result.code}): ${lastLines(result.stderr)}`);
      await this.waitUntilRunning(QUICK_MS);
    } catch (err) {
      // A login that forked (-f) but never answered on the socket would stay logged in for nothing.
      await this.clearStale();
      throw err;
    }
  }

  /**
   * Our master is not answering: end whatever still runs on our socket and remove the socket file,
   * or the next `ssh -M -S` finds it, says "already exists, disabling multiplexing" and starts a
   * plain session that no `-O check` ever sees.
   */
  private async clearStale(): Promise<void> {
    if (!this.controlPath) return;
    await reapMasters(this.controlPath);
    await rm(this.controlPath, { force: true });
    this.masterPid = undefined;
  }

  /**
   * The command that starts our master in the background once logged in (`-f`), keeping the
   * connection for ControlPersist seconds. Run it in a terminal, then call `waitUntilRunning`.
   */
  loginCommand(): LoginCommand {
    return { command: this.config.sshPath, args: [...commonArgs(this.config), ...this.masterArgs(), destination(this.config.target)] };
  }

  private masterArgs(): string[] {
    this.controlPath ??= join(tmpdir(), `swarm-${randomBytes(6).toString('hex')}.sock`); // short: sockets max ~104 bytes
    return [
      '-M', '-S', this.controlPath,
      '-o', `ControlPersist=${this.persistSeconds}`,
      '-o', 'ServerAliveInterval=30',
      '-o', 'ServerAliveCountMax=3',
      '-o', 'ExitOnForwardFailure=yes',
      '-f', '-N',
    ];
  }

  /** Polls `-O check` until the master answers (after a login typed in a terminal, say). */
  async waitUntilRunning(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.check())) {
      if (Date.now() > deadline) throw new Error(`no ssh master for ${this.label} after ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** `ssh -O check`: is the master running? */
  async check(): Promise<boolean> {
    const r = await runSsh(this.config, [...this.control, '-O', 'check'], { timeoutMs: QUICK_MS });
    this.alive = r.code === 0;
    // "Master running (pid=N)": remembered so exit() can wait for that process to be gone.
    const pid = /pid=(\d+)/.exec(r.stderr)?.[1];
    if (this.alive && pid) this.masterPid = Number(pid);
    return this.alive;
  }

  /** Adds `-L 127.0.0.1:local:host:port` or `-D 127.0.0.1:local` on the running master; no new login. */
  async forward(kind: '-L' | '-D', spec: string): Promise<void> {
    const r = await runSsh(this.config, [...this.control, '-O', 'forward', kind, spec], { timeoutMs: QUICK_MS });
    if (r.code !== 0) throw new ForwardError(`${kind} ${spec}: ${lastLines(r.stderr) || `exit ${r.code}`}`, /in use|forwarding failed/i.test(r.stderr));
  }

  async cancel(kind: '-L' | '-D', spec: string): Promise<void> {
    await runSsh(this.config, [...this.control, '-O', 'cancel', kind, spec], { timeoutMs: QUICK_MS });
  }

  /** Runs a command on the login node over the master (reading a remote hostfile); no new login. */
  async exec(remote: readonly string[], timeoutMs = 60_000): Promise<string> {
    const r = await this.run(remote, { timeoutMs });
    if (r.code !== 0) throw new Error(`ssh ${this.label} ${remote.join(' ')}: ${lastLines(r.stderr) || `exit ${r.code}`}`);
    return r.stdout;
  }

  /**
   * Like exec, but the command's exit code and error text are the caller's to read (a scheduler
   * refusing a job says why on stderr). The words reach the remote shell as ssh joins them: callers
   * quote what that shell must not interpret.
   */
  run(remote: readonly string[], options: { timeoutMs?: number; input?: string; stdout?: Writable } = {}): Promise<SshResult> {
    // Once every user let go, ssh finding no socket would log in by itself: a second one-time password.
    if (!this.held) return Promise.resolve({ code: 255, stdout: '', stderr: `the ssh login to ${this.label} has ended` });
    return runSsh(this.config, [...this.control, '-T'], { timeoutMs: options.timeoutMs ?? 60_000, remote, ...(options.input === undefined ? {} : { input: options.input }), ...(options.stdout ? { stdout: options.stdout } : {}) });
  }

  /** Checks liveness every `intervalMs`; emits `down` once when the master is gone. */
  watch(intervalMs: number): void {
    this.unwatch();
    const probe = async () => {
      const wasAlive = this.alive;
      if (!(await this.check()) && wasAlive) this.emit('down', `ssh master for ${this.label} is gone`);
    };
    this.watchTimer = setInterval(probe, intervalMs);
    // A killed master is seen within half a second, without running ssh: its process is gone.
    this.pidTimer = setInterval(() => {
      if (this.alive && this.masterPid && !processExists(this.masterPid)) void probe();
    }, PID_PROBE_MS);
    this.watchTimer.unref();
    this.pidTimer.unref();
  }

  unwatch(): void {
    clearInterval(this.watchTimer);
    clearInterval(this.pidTimer);
    this.watchTimer = undefined;
    this.pidTimer = undefined;
  }

  /** One more user of this login; false once every user has let go (the login is over: make a new one). */
  retain(): boolean {
    if (this.users === 0) return false;
    this.users++;
    return true;
  }

  /** A user lets go; true when it was the last (the caller then stops the master with `exit`). */
  letGo(): boolean {
    this.users = Math.max(0, this.users - 1);
    return this.users === 0;
  }

  /** Whether some user still holds this login. */
  get held(): boolean {
    return this.users > 0;
  }

  /** Stops our master (`-O exit`); the user's own master is left running. No process of ours is left. */
  async exit(): Promise<void> {
    this.unwatch();
    if (this.controlPath) {
      await runSsh(this.config, [...this.control, '-O', 'exit'], { timeoutMs: QUICK_MS });
      // `-O exit` returns once the request is sent; the master takes a moment to close its channels.
      if (this.masterPid) await waitForExit(this.masterPid, 5_000);
      await this.clearStale();
    }
    this.alive = false;
  }

  /** Last resort when the process is exiting right now (no awaiting): signal our master and drop its socket. */
  killNow(): void {
    if (!this.controlPath) return;
    try {
      if (this.masterPid) process.kill(this.masterPid, 'SIGTERM');
    } catch {
      // gone already
    }
    try {
      unlinkSync(this.controlPath);
    } catch {
      // gone already
    }
  }

  /** Does the user's ssh config already multiplex this host, with its master up? */
  private async usersMasterRunning(): Promise<boolean> {
    const g = await runSsh(this.config, ['-G'], { timeoutMs: QUICK_MS });
    const setting = (key: string) => new RegExp(`^${key} (.*)$`, 'm').exec(g.stdout)?.[1]?.trim();
    const path = setting('controlpath');
    if (g.code !== 0 || !path || path === 'none' || setting('controlmaster') === 'false') return false;
    return (await runSsh(this.config, ['-O', 'check'], { timeoutMs: QUICK_MS })).code === 0;
  }
}

/** A forward that could not be set up; `portTaken` when the local port was the problem. */
export class ForwardError extends Error {
  override name = 'ForwardError';
  constructor(
    message: string,
    readonly portTaken: boolean,
  ) {
    super(message);
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}

/** Resolves once process `pid` has exited (or only its zombie is left), or after `timeoutMs`. */
async function waitForExit(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
      if (/^\d+ \(.*\) Z/.test(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''))) return;
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

function lastLines(text: string): string {
  return text.split('\n').filter(Boolean).slice(-3).join(' / ');
}

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freeLocalPort } from '../../src/core/tunnels/local-port.ts';
import { until } from './patience.ts';

const SSHD = '/usr/sbin/sshd';

/** Whether the real OpenSSH server is installed (scripts/install-test-deps.sh installs it). */
export const haveSshd = existsSync(SSHD);

/**
 * A real OpenSSH server on a free loopback port with throw-away keys (notes: testing-offline §3),
 * plus a client config that logs in with them and no prompts.
 */
export class TestSshd {
  readonly dir = mkdtempSync(join(tmpdir(), 'swarm-sshd-'));
  readonly clientConfig = join(this.dir, 'ssh_config');
  /** The server's log (its logins: `logins()`); read by suites running in another process too. */
  readonly log = join(this.dir, 'sshd.log');
  /**
   * The login's home (HOME in its sessions): its own, so what a test leaves there (`~/.swarm/jobs/NAME`
   * of a launch, `~/.cache`) goes with the server, and two test runs side by side never write one
   * job's folder (both runs' `share-a` made a 4-line hostfile of a 2-server job). The user's start-up
   * files stay out of the logins too.
   */
  readonly home = join(this.dir, 'home');
  private child: ChildProcess | undefined;
  port = 0;

  /** `env`: variables the login's commands need (SLURM_CONF, say), set by sshd in every session. */
  constructor(private readonly env: Readonly<Record<string, string>> = {}) {}

  get via(): string {
    return `${userInfo().username}@127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) {
      this.port = await freeLocalPort();
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(this.dir, 'id_test')]);
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(this.dir, 'host_key')]);
      writeFileSync(join(this.dir, 'authorized_keys'), readFileSync(join(this.dir, 'id_test.pub')), { mode: 0o600 });
      writeFileSync(
        join(this.dir, 'sshd_config'),
        [
          `Port ${this.port}`,
          'ListenAddress 127.0.0.1',
          `HostKey ${join(this.dir, 'host_key')}`,
          `PidFile ${join(this.dir, 'sshd.pid')}`,
          `AuthorizedKeysFile ${join(this.dir, 'authorized_keys')}`,
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'PubkeyAuthentication yes',
          'PermitRootLogin prohibit-password',
          'AllowTcpForwarding yes',
          'StrictModes no',
          'UsePAM no',
          'LogLevel INFO',
          // One line: sshd takes the first SetEnv only. SHLVL=1 because Debian's bash reads ~/.bashrc
          // for a command run by sshd (SSH_SOURCE_BASHRC) unless it is a nested shell: the developer's
          // start-up files stay out of the tests' logins. This machine's runs pyenv's rehash, whose
          // lock, left by a session killed mid-start, made every later login wait 60 s (CI failed 16
          // SSH tests on it).
          `SetEnv ${Object.entries({ SHLVL: '1', HOME: this.home, ...this.env }).map(([k, v]) => `${k}=${v}`).join(' ')}`,
          '',
        ].join('\n'),
      );
      writeFileSync(
        this.clientConfig,
        [
          'Host *',
          `  IdentityFile ${join(this.dir, 'id_test')}`,
          '  IdentitiesOnly yes',
          '  StrictHostKeyChecking no',
          `  UserKnownHostsFile ${join(this.dir, 'known_hosts')}`,
          '  BatchMode yes',
          '  LogLevel ERROR',
          '',
        ].join('\n'),
      );
      mkdirSync(this.home);
      mkdirSync('/run/sshd', { recursive: true });
    }
    this.child = spawn(SSHD, ['-D', '-f', join(this.dir, 'sshd_config'), '-E', this.log], { stdio: 'ignore' });
    await waitForPort(this.port);
  }

  /** Kills the server and every session it forked (as a crash or a reboot of the login node would), and nothing else. */
  async kill(): Promise<void> {
    if (!this.child?.pid) return;
    const sessions = descendants(this.child.pid);
    const exited = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await exited;
    this.child = undefined;
    for (const pid of sessions) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /**
   * Commands running in its sessions now (any process below the server that is not sshd itself: a
   * shell, what it runs). Killing a login shell while it starts up can leave a stale lock of the
   * user's start-up files (pyenv's rehash in ~/.bashrc waits 60 s on one), so a test that kills
   * the server mid-run waits for its sessions to be idle first; the connections stay open.
   */
  busy(): number[] {
    if (!this.child?.pid) return [];
    const comm = new Map(
      execFileSync('ps', ['-eo', 'pid=,comm='], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s+/) as [string, string])
        .map(([pid, name]) => [Number(pid), name]),
    );
    return descendants(this.child.pid).filter((pid) => comm.get(pid) !== undefined && comm.get(pid) !== 'sshd');
  }

  /** Successful logins so far, from the server's own authentication log. */
  logins(): number {
    return existsSync(this.log) ? readFileSync(this.log, 'utf8').split('\n').filter((l) => l.includes('Accepted publickey')).length : 0;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Every process below `pid` in the process tree. */
function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length; ) {
    frontier = rows.filter(([, ppid]) => frontier.includes(ppid)).map(([p]) => p);
    found.push(...frontier);
  }
  return found;
}

async function waitForPort(port: number): Promise<void> {
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
  await until(listening, `sshd to listen on ${port}`, 5_000, { intervalMs: 50 });
}

/** Pids of live ssh masters (`-M`) logged in to port `port`. */
export function masters(port: number): number[] {
  return execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(l))
    .filter((m) => m && !m[2]!.startsWith('Z') && /^ssh\s/.test(m[3]!) && /\s-M\s/.test(m[3]!) && m[3]!.includes(`-p ${port}`))
    .map((m) => Number(m![1]));
}

import type { Writable } from 'node:stream';
import { spawn, type StdioOptions } from 'node:child_process';
import { childEnv } from './child-env.ts';
import { checkLocalPath, checkSshOption, destination, parseTarget, type SshTarget } from './ssh-args.ts';

/** How to call the user's own OpenSSH client for one login target. */
export interface SshConfig {
  sshPath: string;
  target: SshTarget;
  /** `-F`: a config file instead of ~/.ssh/config (tests; unusual setups). */
  configFile?: string;
  /** Validated `Key=value` pairs for `-o`. */
  options: string[];
}

export interface SshSettings {
  via: string;
  sshPath?: string;
  sshConfigFile?: string;
  sshOptions?: readonly string[];
}

/** Validates every value that will reach ssh's argument list; throws before any process starts. */
export function sshConfig(settings: SshSettings): SshConfig {
  const config: SshConfig = {
    sshPath: checkLocalPath(settings.sshPath || 'ssh', 'ssh path'),
    target: parseTarget(settings.via),
    options: (settings.sshOptions ?? []).map(checkSshOption),
  };
  if (settings.sshConfigFile) config.configFile = checkLocalPath(settings.sshConfigFile, 'ssh config file');
  return config;
}

/** The arguments every call shares, up to (not including) the destination. */
export function commonArgs(config: SshConfig): string[] {
  return [
    ...(config.configFile ? ['-F', config.configFile] : []),
    ...config.options.flatMap((o) => ['-o', o]),
    ...(config.target.port ? ['-p', String(config.target.port)] : []),
  ];
}

export interface SshResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs ssh without a shell: `[...common, ...args, destination, ...remote]`. With `interactive`
 * the terminal is inherited so a one-time password can be typed; otherwise output is captured.
 * `input` is written to the remote command's standard input (a job script for `tee`); with
 * `stdout`, the command's output goes there as it comes (a results file copied), not into `stdout`.
 */
export function runSsh(
  config: SshConfig,
  args: readonly string[],
  options: { timeoutMs: number; interactive?: boolean; remote?: readonly string[]; input?: string; stdout?: Writable },
): Promise<SshResult> {
  const argv = [...commonArgs(config), ...args, destination(config.target), ...(options.remote ?? [])];
  const stdio: StdioOptions = options.interactive ? 'inherit' : [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'];
  return new Promise((resolve, reject) => {
    const child = spawn(config.sshPath, argv, { stdio, shell: false, windowsHide: true, env: childEnv() });
    // A remote command that exits without reading its input closes the pipe: that is its answer, not ours to throw.
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.input);
    let stdout = '';
    let stderr = '';
    // Decoded as a stream: a character split between two reads stays whole.
    if (options.stdout) child.stdout?.pipe(options.stdout);
    else child.stdout?.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => {
      stderr += `\n(ssh gave no answer within ${options.timeoutMs / 1000} s)`;
      child.kill('SIGKILL');
      // A copy whose reader is stuck: let go of its pipe too, so the call ends.
      if (options.stdout) child.stdout?.destroy();
    }, options.timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${config.sshPath}: ${err.message}`));
    });
    // A master forked by -f inherits our pipes and holds them for its lifetime: after the
    // process we started exits, take what output arrives promptly and let go of the pipes.
    child.once('exit', (code) => {
      const finish = () => {
        clearTimeout(timer);
        child.stdout?.destroy();
        child.stderr?.destroy();
        resolve({ code, stdout, stderr: stderr.trim() });
      };
      // Output copied into `stdout` is read to its end: its last bytes may still be in the pipe when
      // ssh exits (long after 100 ms when the reader is slow), and cutting the pipe cut the copy and
      // left the writer open for good. A command through a master forks nothing to hold the pipe.
      if (options.stdout) {
        child.once('close', finish);
        return;
      }
      clearTimeout(timer);
      const grace = setTimeout(finish, 100);
      child.once('close', () => {
        clearTimeout(grace);
        finish();
      });
    });
  });
}

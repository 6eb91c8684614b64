import { spawn } from 'node:child_process';

/** What a command answered. */
export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `argv` on this machine without a shell, in the environment given (callers pass a scrubbed
 * one: childEnv), killed after `timeoutMs`. A command that cannot start answers exit 127, as a shell would.
 */
export function runCommand(argv: readonly string[], env: NodeJS.ProcessEnv, options: { input?: string; timeoutMs?: number } = {}): Promise<CommandResult> {
  const [command, ...args] = argv;
  return new Promise((resolve) => {
    const child = spawn(command!, args, { shell: false, env, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], windowsHide: true });
    // Our own deadline: spawn's `timeout` keeps its timer for the whole span when the command never starts.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.input);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: `cannot run ${command}: ${err.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

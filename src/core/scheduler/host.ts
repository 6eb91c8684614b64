import type { CommandResult } from '../process/run-command.ts';

export type { CommandResult };

/**
 * Where the scheduler's commands run and the job's files live: this machine, or the login node
 * through the one SSH master. The scheduler adapters only build argument lists and read answers;
 * this is the only part that starts processes or touches files.
 */
export interface JobHost {
  /** `this machine`, or the login it rides on (`user@aurora`): for messages. */
  readonly label: string;
  /** Runs `argv` without a shell (over SSH: each word quoted for the login shell). */
  run(argv: readonly string[], options?: { input?: string; timeoutMs?: number }): Promise<CommandResult>;
  /** A file's text, or undefined while it does not exist (a hostfile the job has not written yet). */
  readText(path: string): Promise<string | undefined>;
  /** Writes a file, making its folder first. */
  writeText(path: string, text: string): Promise<void>;
  /** The folder relative paths are taken from (the login's home over SSH). */
  home(): Promise<string>;
}

/** A scheduler refused or failed a request; the message says which and why, in its own words. */
export class SchedulerError extends Error {
  override name = 'SchedulerError';
  constructor(
    message: string,
    /** True when the request itself was at fault (bad queue, account, walltime): bad input to us. */
    readonly refused = false,
  ) {
    super(message);
  }
}

/** The last few non-empty lines of a command's error text, on one line. */
export function errorLines(result: CommandResult): string {
  return (result.stderr || result.stdout).split('\n').map((l) => l.trim()).filter(Boolean).slice(-3).join(' / ') || `exit ${result.code}`;
}

import { constants } from 'node:os';

/** The `swarm` exit codes other tools rely on, the same for every command. */
export const EXIT = {
  ok: 0,
  /** Some prompts failed, some endpoints are unhealthy, or nothing survived a reduction. */
  failed: 1,
  /** Bad input: hostfile, prompt file, options. */
  badInput: 2,
} as const;

/** Stopped by a signal after writing every finished result: 128 + its number, as a shell reports it (SIGINT 130, SIGTERM 143, SIGHUP 129). */
export const signalExit = (signal: NodeJS.Signals): number => 128 + constants.signals[signal];

/** An error whose message is for the user as is, with the exit code it calls for. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.badInput,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The `swarm` exit codes other tools rely on. */
export const EXIT = {
  ok: 0,
  /** Some prompts failed, some endpoints are unhealthy, or nothing survived a reduction. */
  failed: 1,
  /** Bad input: hostfile, prompt file, options. */
  badInput: 2,
  /** Interrupted (Ctrl-C) after writing every finished result. */
  interrupted: 130,
} as const;

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

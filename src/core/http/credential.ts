/** A key as one request carries it, and which issue of its source it was (a key command issues a new one when the old expires). */
export interface IssuedKey {
  value: string;
  issue: number;
}

/**
 * Where an endpoint's key comes from. A fixed key (the environment, VS Code's secret storage) never
 * changes; a key command's is fetched again when the service stops taking a key that worked — the
 * Globus tokens of ALCF's Inference Endpoints live about 48 hours.
 */
export interface Credential {
  /** Where the key comes from, for messages (`key=env:ALCF_TOKEN`, `--api-key-command`): never the key. */
  readonly source: string;
  current(): IssuedKey | Promise<IssuedKey>;
  /** A request carrying this issue was answered: the key works. */
  worked(issue: number): void;
  /** A request carrying this issue got a 401: true when a fresher key is there to try once; false when the refusal stands. */
  refused(issue: number): Promise<boolean>;
  /** Why the refusal of this issue stands, for the endpoint's message. */
  refusal(issue: number): string;
}

/** A key that never changes: a refusal stands. */
export function fixedKey(value: string, source: string): Credential {
  return {
    source,
    current: () => ({ value, issue: 0 }),
    worked: () => {},
    refused: async () => false,
    refusal: () => `the key of ${source} was refused`,
  };
}

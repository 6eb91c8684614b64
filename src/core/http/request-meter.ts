/**
 * What a request was for, as a run's figures break its HTTP requests down: generation (completions,
 * chat, batch chat, embeddings), or what prepares and watches it.
 */
export type RequestKind = 'generation' | 'probe' | 'tokenize' | 'models' | 'version' | 'metrics' | 'health';

/** How a request to a generation path that generates nothing (a probe of the route) is counted. */
export const probeOf = (path: string): string => `${path} (probe)`;

const KINDS: ReadonlyMap<string, RequestKind> = new Map([
  ['/v1/completions', 'generation'],
  ['/v1/chat/completions', 'generation'],
  ['/v1/chat/completions/batch', 'generation'],
  ['/v1/embeddings', 'generation'],
  ['/tokenize', 'tokenize'],
  ['/detokenize', 'tokenize'],
  ['/v1/models', 'models'],
  ['/version', 'version'],
  ['/metrics', 'metrics'],
  ['/health', 'health'],
]);

export function requestKind(path: string): RequestKind {
  return path.endsWith(' (probe)') ? 'probe' : (KINDS.get(path) ?? 'health');
}

/** Where a request is counted the moment it is sent: the run it was sent for. */
export interface Meter {
  sent(endpoint: string, path: string): void;
}

/**
 * Requests made before any run could be charged for them (a model lookup the CLI does before its
 * run starts, cached for the pool's life): the first run that uses their answer pays for them, so
 * every request is counted once, by the run it served (later requests of it, a retry, go to that run too).
 */
export class Unbilled implements Meter {
  private held: Array<[string, string]> = [];
  /** The first meter billed: requests still to come (a retry, one queued behind others) go to it directly. */
  private payer: Meter | undefined;

  sent(endpoint: string, path: string): void {
    if (this.payer) this.payer.sent(endpoint, path);
    else this.held.push([endpoint, path]);
  }

  billTo(meter: Meter | undefined): void {
    if (!meter || this.payer) return;
    this.payer = meter;
    for (const [endpoint, path] of this.held) meter.sent(endpoint, path);
    this.held = [];
  }
}

import type { Dispatcher } from 'undici';
import { isAscii } from 'node:buffer';
import type { RequestSignal } from './abort.ts';
import { RequestFailure } from './failure.ts';

/** A response read whole: its status, `Retry-After`, text body, and when its headers arrived (`performance.now()`). */
export interface WholeResponse {
  statusCode: number;
  retryAfter?: string | string[];
  body: string;
  firstByteAt: number;
}

/** What reading a response whole is given: its size cap, and a call at its headers. */
export interface WholeOptions {
  /** Over this many bytes, the body is cut off and the request fails (the endpoint's fault: another may answer). */
  maxBytes: number;
  /** The path named in that failure. */
  path: string;
  onHeaders?: (at: number) => void;
}

/**
 * One request whose answer is read whole into memory, through undici's dispatch handler rather than
 * its `request` API: no response stream, async iterator or async resource per request — in
 * individual mode those cost more than everything else of ours on the way. The request's signal
 * aborts it as undici's own would (its reason is the failure). The pool's dispatchers tell when
 * the request was written whole (`WrittenOptions.onWritten`).
 */
export function readWhole(dispatcher: Dispatcher, request: Dispatcher.DispatchOptions, signal: RequestSignal | undefined, options: WholeOptions): Promise<WholeResponse> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(request, new WholeBody(resolve, reject, signal, options));
  });
}

/** undici's handler of one request (its callbacks are methods: no closures per request). */
class WholeBody implements Dispatcher.DispatchHandler {
  private abort: ((err?: Error) => void) | null = null;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private statusCode = 0;
  private retryAfter: string | string[] | undefined;
  private firstByteAt = 0;
  private readonly onAbort: (() => void) | null = null;

  constructor(
    private readonly resolve: (response: WholeResponse) => void,
    private readonly reject: (err: unknown) => void,
    private readonly signal: RequestSignal | undefined,
    private readonly options: WholeOptions,
  ) {
    if (signal && !signal.aborted) {
      this.onAbort = () => this.abort?.(reasonOf(signal));
      listen(signal, this.onAbort);
    }
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.signal?.aborted) return abort(reasonOf(this.signal));
    this.abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true; // 1xx: the response is still to come
    this.statusCode = statusCode;
    this.firstByteAt = performance.now();
    for (let i = 0; i < rawHeaders.length; i += 2) {
      if (rawHeaders[i]!.length !== 11 || rawHeaders[i]!.toString('latin1').toLowerCase() !== 'retry-after') continue;
      const value = rawHeaders[i + 1]!.toString('latin1');
      this.retryAfter = this.retryAfter === undefined ? value : [this.retryAfter, value].flat();
    }
    this.options.onHeaders?.(this.firstByteAt);
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.bytes > this.options.maxBytes) {
      // A server (or proxy) that sends a gigabyte for a few answers is failed, not held in memory.
      this.abort?.(new RequestFailure('http', `${this.options.path} answered more than ${(this.options.maxBytes / 2 ** 20).toFixed(1)} MB, far more than its answers can hold: cut off`));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.done();
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.bytes);
    this.resolve({ statusCode: this.statusCode, retryAfter: this.retryAfter, body: decoded(bytes), firstByteAt: this.firstByteAt });
  }

  onError(err: Error): void {
    this.done();
    this.reject(err);
  }

  private done(): void {
    if (this.onAbort) unlisten(this.signal!, this.onAbort);
  }
}

/** What an aborted signal fails its request with: its reason when it gave one. */
function reasonOf(signal: RequestSignal): Error {
  return signal.reason instanceof Error ? signal.reason : Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
}

function listen(signal: RequestSignal, onAbort: () => void): void {
  signal.addEventListener('abort', onAbort, { once: true });
}

function unlisten(signal: RequestSignal, onAbort: () => void): void {
  signal.removeEventListener('abort', onAbort);
}

/**
 * UTF-8 bytes as a string. ASCII (an English batch's JSON is) becomes a one-byte string by a plain
 * copy: Node 20 decodes 1.5 MB of it as UTF-8 in ~11 ms, as latin1 in ~0.5 ms — a third of a
 * 200,000-prompt run's client CPU was this decoding.
 */
export function decoded(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

import { EventEmitter } from 'node:events';

/**
 * One request's cancel switch. undici takes any emitter with `aborted` as a request's signal; this
 * costs a fraction of an AbortController and its EventTarget listeners, and individual mode makes
 * one per prompt. `reason` is what the request then fails with.
 */
export class Abort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/** What a request can be cancelled by: a caller's AbortSignal, or an Abort of our own. */
export type RequestSignal = AbortSignal | Abort;

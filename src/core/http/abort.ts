/**
 * One request's cancel switch, shaped as much of an AbortSignal as undici and our readers use
 * (`aborted`, `reason`, abort listeners). Individual mode makes one per prompt: an AbortController's
 * EventTarget, or an EventEmitter and its `once` wrappers, cost more than the request's own JSON.
 * `reason` is what the request then fails with.
 */
export class Abort {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | null = null;

  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at !== -1) this.listeners!.splice(at, 1);
  }

  /** Every listener is called once (the switch does not go back). */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const listener of listeners) listener();
  }
}

/** What a request can be cancelled by: a caller's AbortSignal, or an Abort of our own. */
export type RequestSignal = AbortSignal | Abort;

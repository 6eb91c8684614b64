import { performance } from 'node:perf_hooks';

/** One request's pass through the front end. */
export interface Entry {
  /** Its sequences reached the engine. */
  readonly admitted: boolean;
  /** Takes it out before it is let in (a client that left); nothing once admitted. */
  withdraw(): void;
}

/**
 * vLLM's API server is one Python process: each HTTP request holds it for `overheadMs`, one after
 * another, before its sequences reach the engine. Modeled time counts from the request's arrival,
 * not from now: one simulator process plays many servers, and while it was busy elsewhere this
 * request would already have been on its way on a server of its own.
 */
export class FrontEnd {
  /** When the front end is next free; -Infinity at first, so no arrival time (performance.now() counts from process start) is ever pushed later by the clock's origin. */
  private freeAt = -Infinity;
  /** Sequences of requests not let in yet: part of the load a data-parallel balancer compares. */
  holding = 0;

  constructor(private readonly overheadMs: number) {}

  /** Lets a request of `size` sequences in at its modeled turn: `admit(admitAt)` then (at once when that is not in the future). */
  enter(size: number, arrivedAt: number, admit: (admitAt: number) => void): Entry {
    const now = performance.now();
    this.freeAt = Math.max(Math.min(arrivedAt, now), this.freeAt) + this.overheadMs;
    const admitAt = this.freeAt;
    let timer: NodeJS.Timeout | undefined;
    const entry = {
      admitted: false,
      withdraw: () => {
        if (timer === undefined) return;
        clearTimeout(timer);
        timer = undefined;
        this.holding -= size;
      },
    };
    const letIn = (): void => {
      timer = undefined;
      this.holding -= size;
      entry.admitted = true;
      admit(admitAt);
    };
    this.holding += size;
    if (admitAt > now) timer = setTimeout(letIn, admitAt - now);
    else letIn();
    return entry;
  }
}

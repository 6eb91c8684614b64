/**
 * The one throttle (the extension's views, a detached run's status file): `fn` runs at most once per `intervalMs`, on the trailing edge
 * (a burst of calls ends with one run, so the latest state always shows), never more often.
 */
export interface Throttled {
  /** Asks for a run; it happens now if the interval has passed, else once it has. */
  call(): void;
  /** Runs now if a call is waiting (the last word before a run ends). */
  flush(): void;
  cancel(): void;
}

export function throttle(fn: () => void, intervalMs: number): Throttled {
  let last = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  const run = () => {
    clearTimeout(timer);
    timer = undefined;
    last = performance.now();
    fn();
  };
  return {
    call() {
      // Unref'd: a run still waiting never keeps a process alive (a CLI says its last word on exit).
      timer ??= setTimeout(run, Math.max(0, last + intervalMs - performance.now())).unref();
    },
    flush() {
      if (timer) run();
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

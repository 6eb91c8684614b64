/** Runs `work` once the cap allows; resolves or rejects as it does. */
export type Capped = <T>(work: () => Promise<T>) => Promise<T>;

/**
 * The pool's cap on requests in flight, shared by every run on it. Under the cap, `work` starts at
 * once and its own promise is handed back; over it, `work` waits in line (first come, first served).
 * p-limit wraps each call in four promises and two microtask hops, as much CPU as our own
 * bookkeeping of an individual-mode request.
 */
export function requestCap(concurrency: number): Capped {
  let active = 0;
  // Only runs sharing a pool wait here (a dispatch keeps its own requests under the cap), so the line stays short.
  const waiting: Array<() => void> = [];
  const done = () => {
    active--;
    waiting.shift()?.();
  };
  const start = <T>(work: () => Promise<T>): Promise<T> => {
    active++;
    let running: Promise<T>;
    try {
      running = work();
    } catch (err) {
      running = Promise.reject(err);
    }
    running.then(done, done);
    return running;
  };
  return <T>(work: () => Promise<T>): Promise<T> => {
    if (active < concurrency) return start(work);
    return new Promise<T>((resolve, reject) => waiting.push(() => start(work).then(resolve, reject)));
  };
}

/**
 * Runs `work` once the cap allows; resolves or rejects as it does. `work` may give its place back
 * early with `release` (a hung request raced by a hedge holds a socket, not a server's work).
 */
export type Capped = <T>(work: (release: () => void) => Promise<T>) => Promise<T>;

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
  const start = <T>(work: (release: () => void) => Promise<T>): Promise<T> => {
    active++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      done();
    };
    let running: Promise<T>;
    try {
      running = work(release);
    } catch (err) {
      running = Promise.reject(err);
    }
    running.then(release, release);
    return running;
  };
  return <T>(work: (release: () => void) => Promise<T>): Promise<T> => {
    if (active < concurrency) return start(work);
    return new Promise<T>((resolve, reject) => waiting.push(() => start(work).then(resolve, reject)));
  };
}

/**
 * When requests arrive in a sustained-load run, as `vllm bench serve` spaces them
 * (vllm/benchmarks/serve.py, get_request): at `--request-rate` R, either a Poisson process (gaps
 * drawn from an exponential of mean 1/R, burstiness 1) or constant gaps of 1/R.
 */
export type ArrivalProcess = 'poisson' | 'constant';
export const ARRIVAL_PROCESSES: readonly ArrivalProcess[] = ['poisson', 'constant'];

/** The next gap between arrivals, ms, for `rate` requests per second; `random` returns [0, 1). */
export function arrivalGaps(rate: number, process: ArrivalProcess, random: () => number): () => number {
  const meanMs = 1000 / rate;
  if (process === 'constant') return () => meanMs;
  // Inverse transform of the exponential; 1 − u is in (0, 1], so the log is finite.
  return () => -Math.log(1 - random()) * meanMs;
}

import type { SequenceListener, SequenceWork, SimEngine } from './engine.ts';

/**
 * Schedules a request's sequences over data-parallel engines. vLLM makes each prompt of a list its
 * own engine request (its `n` samples stay together) and its DP load balancer sends each to the
 * least loaded engine, so one batched request spreads over all of them.
 */
export function submitSpread(engines: readonly SimEngine[], work: readonly SequenceWork[], n: number, listener: SequenceListener, arrivedAt?: number): () => void {
  if (engines.length === 1) return engines[0]!.submit(work, listener, arrivedAt);
  const loads = engines.map((e) => e.load);
  const groups = engines.map((): number[] => []);
  for (let first = 0; first < work.length; first += n) {
    const k = loads.indexOf(loads.reduce((m, v) => Math.min(m, v), Infinity));
    loads[k]! += n;
    for (let i = first; i < first + n; i++) groups[k]!.push(i);
  }
  const cancels = groups.flatMap((indices, k) => {
    if (indices.length === 0) return [];
    const { onToken } = listener;
    const local: SequenceListener = { onDone: (i) => listener.onDone(indices[i]!) };
    if (onToken) local.onToken = (i, token) => onToken.call(listener, indices[i]!, token);
    return [engines[k]!.submit(indices.map((i) => work[i]!), local, arrivedAt)];
  });
  return () => cancels.forEach((cancel) => cancel());
}

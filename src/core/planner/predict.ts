import type { LatencyModel } from './latency-model.ts';

/** A run to predict: its prompts over its endpoints, and what the client keeps in flight. */
export interface Scenario {
  endpoints: number;
  prompts: number;
  /**
   * Requests in flight across the swarm (individual requests; round-robin spreads them evenly). Batched:
   * each endpoint gets all its prompts in one request, and the server runs max-num-seqs of them at a time.
   */
  inFlight: number;
  batched?: boolean;
}

export interface Prediction {
  wallMs: number;
  /** Prompts on the busiest endpoint (prompt i goes to endpoint i mod n), and how many of them run at once. */
  perEndpoint: number;
  running: number;
}

/**
 * The modeled wall time of a scenario: the busiest endpoint's engine stepped through its prompts (its
 * continuous batch admits prompts while it has free sequences; each step costs what the model says for its
 * batch and the prompt tokens it prefills), each request arriving one overhead after it is sent, the next
 * one sent when one finishes. Prompt lengths are the fitted run's, cycled.
 */
export function predictWall(model: LatencyModel, s: Scenario): Prediction {
  const n = Math.ceil(s.prompts / s.endpoints);
  const clientCap = s.batched ? n : Math.max(1, Math.ceil(s.inFlight / s.endpoints));
  const slots = model.maxNumSeqs;
  const lengths = model.lengths;
  // Requests on their way to the server (arrival times, in order) and arrived ones waiting for a sequence slot.
  const arrivals: number[] = [];
  let nextArrival = 0;
  let queued = 0;
  let sent = Math.min(clientCap, n);
  for (let i = 0; i < sent; i++) arrivals.push(model.overheadMs);
  let admitted = 0;
  let completed = 0;
  let running = 0;
  const finishing = new Map<number, number>();
  let t = 0;
  let step = 0;
  let lastDone = 0;
  while (completed < n) {
    while (nextArrival < arrivals.length && arrivals[nextArrival]! <= t) {
      nextArrival++;
      queued++;
    }
    let prefill = 0;
    while (queued > 0 && running < slots) {
      const [inTokens, outTokens] = lengths[admitted % lengths.length]!;
      admitted++;
      queued--;
      running++;
      prefill += inTokens;
      const at = step + Math.max(0, outTokens - 1);
      finishing.set(at, (finishing.get(at) ?? 0) + 1);
    }
    if (!running) {
      if (nextArrival >= arrivals.length) break; // nothing left that could come (cannot happen with n > 0)
      t = arrivals[nextArrival]!;
      continue;
    }
    t += model.stepMs + model.perSeqMs * running + model.prefillMsPerToken * prefill;
    const done = finishing.get(step) ?? 0;
    finishing.delete(step);
    step++;
    if (!done) continue;
    running -= done;
    completed += done;
    lastDone = t;
    for (let k = 0; k < done && sent < n; k++, sent++) arrivals.push(t + model.overheadMs);
  }
  return { wallMs: lastDone, perEndpoint: n, running: Math.min(slots, clientCap, n) };
}

/**
 * The fewest endpoints that finish `prompts` within `deadlineMs`, each with `inFlightPerEndpoint` requests
 * in flight (the swarm's in flight grows with it); null when even `most` endpoints cannot.
 */
export function endpointsForDeadline(model: LatencyModel, prompts: number, deadlineMs: number, inFlightPerEndpoint: number, batched: boolean, most = 100_000): number | null {
  const fits = (e: number) => predictWall(model, { endpoints: e, prompts, inFlight: e * inFlightPerEndpoint, batched }).wallMs <= deadlineMs;
  if (!fits(most)) return null;
  let lo = 1;
  let hi = most;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (fits(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

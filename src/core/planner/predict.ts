import type { LatencyModel } from './latency-model.ts';

/** A run to predict: its prompts over its endpoints, and what the client keeps in flight. */
export interface Scenario {
  endpoints: number;
  prompts: number;
  /**
   * Requests in flight across the swarm (individual requests: prompt i goes to endpoint i mod n, sent in
   * order whenever one of them finishes). Batched: each endpoint gets all its prompts in one request, and
   * the server runs max-num-seqs of them at a time.
   */
  inFlight: number;
  batched?: boolean;
}

/** A run's predicted wall time beside its measured one (an experiment's runs, the planner fitted on one of them). */
export interface PredictedRun {
  value: number | null;
  arm: string;
  repetition: number;
  predictedMs: number;
  measuredMs: number;
  /** This is the run the model was fitted on. */
  fitted: boolean;
}

export interface Prediction {
  wallMs: number;
  /** Prompts on the busiest endpoint (prompt i goes to endpoint i mod n), and how many of them run at once. */
  perEndpoint: number;
  running: number;
}

/**
 * A swarm of more than this many endpoints is modeled as this many, each with the same prompts and in
 * flight as one of the swarm's: the unevenness round-robin under one cap causes (one endpoint holding
 * more requests than it has slots while another idles) shows within them, and a search over 100,000
 * endpoints stays cheap.
 */
const MODELED_ENDPOINTS = 64;

/** One modeled server: requests that reached it and wait for a slot, and its continuous batch. */
interface Engine {
  id: number;
  /** Arrival times, ascending, of requests not yet admitted, and their prompts' lengths. */
  arrivals: Array<{ at: number; inTokens: number; outTokens: number }>;
  running: number;
  /** Step index at which running sequences finish → how many. */
  finishing: Map<number, number>;
  step: number;
  /** End of the step under way; null when idle. */
  busyUntil: number | null;
}

/**
 * The modeled wall time of a scenario: every endpoint's engine stepped through its prompts (its
 * continuous batch admits arrived requests while it has free sequences; each step costs what the model
 * says for its batch and the prompt tokens it prefills), each request arriving one overhead after it is
 * sent, and the client sending the next prompt, to its own endpoint, whenever any request finishes. So
 * an endpoint that happens to hold more requests than slots queues them while another has free slots,
 * as round-robin under one cap does. Prompt lengths are the fitted run's, cycled.
 */
export function predictWall(model: LatencyModel, s: Scenario): Prediction {
  const perEndpoint = Math.ceil(s.prompts / s.endpoints);
  const scale = s.endpoints > MODELED_ENDPOINTS ? MODELED_ENDPOINTS / s.endpoints : 1;
  const endpoints = Math.min(s.endpoints, MODELED_ENDPOINTS);
  // Scaled down, the busiest endpoint's share is kept: every modeled endpoint gets it.
  const prompts = scale < 1 ? perEndpoint * endpoints : s.prompts;
  const cap = s.batched ? prompts : Math.max(1, Math.round(s.inFlight * scale));
  const lengths = model.lengths;
  const engines: Engine[] = Array.from({ length: endpoints }, (_, id) => ({ id, arrivals: [], running: 0, finishing: new Map(), step: 0, busyUntil: null }));
  // Engines with a step under way, by its end (a binary heap).
  const heap: Engine[] = [];
  let sent = 0;
  let lastDone = 0;

  const send = (t: number) => {
    const [inTokens, outTokens] = lengths[sent % lengths.length]!;
    const e = engines[sent % endpoints]!;
    sent++;
    e.arrivals.push({ at: t + model.overheadMs, inTokens, outTokens });
    if (e.busyUntil === null) startStep(e, t + model.overheadMs);
  };
  /** Admits what has arrived by `t` into free slots and starts a step; stays idle when nothing runs. */
  const startStep = (e: Engine, t: number) => {
    let prefill = 0;
    while (e.arrivals.length && e.arrivals[0]!.at <= t && e.running < model.maxNumSeqs) {
      const a = e.arrivals.shift()!;
      e.running++;
      prefill += a.inTokens;
      const at = e.step + Math.max(0, a.outTokens - 1);
      e.finishing.set(at, (e.finishing.get(at) ?? 0) + 1);
    }
    if (!e.running) {
      e.busyUntil = null;
      // Nothing arrived yet: the engine wakes when the first request waiting does.
      if (e.arrivals.length) schedule(e, e.arrivals[0]!.at, true);
      return;
    }
    schedule(e, t + model.stepMs + model.perSeqMs * e.running + model.prefillMsPerToken * prefill, false);
  };
  const wakes = new Set<Engine>();
  const schedule = (e: Engine, at: number, wake: boolean) => {
    e.busyUntil = at;
    if (wake) wakes.add(e);
    else wakes.delete(e);
    push(heap, e);
  };

  for (let i = 0; i < Math.min(cap, prompts); i++) send(0);
  while (heap.length) {
    const e = pop(heap);
    const t = e.busyUntil!;
    if (wakes.has(e)) {
      wakes.delete(e);
      startStep(e, t);
      continue;
    }
    const done = e.finishing.get(e.step) ?? 0;
    e.finishing.delete(e.step);
    e.step++;
    e.running -= done;
    if (done) lastDone = t;
    for (let k = 0; k < done && sent < prompts; k++) send(t);
    startStep(e, t);
  }
  return { wallMs: lastDone, perEndpoint, running: Math.min(model.maxNumSeqs, s.batched ? perEndpoint : Math.ceil(cap / endpoints), perEndpoint) };
}

function push(heap: Engine[], e: Engine): void {
  heap.push(e);
  let i = heap.length - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (before(heap[p]!, heap[i]!)) break;
    [heap[p], heap[i]] = [heap[i]!, heap[p]!];
    i = p;
  }
}

function pop(heap: Engine[]): Engine {
  const top = heap[0]!;
  const last = heap.pop()!;
  if (heap.length) {
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
      if (m === i) break;
      [heap[m], heap[i]] = [heap[i]!, heap[m]!];
      i = m;
    }
  }
  return top;
}

/** Earlier first; at a tie, the lower endpoint (a deterministic order). */
const before = (a: Engine, b: Engine) => a.busyUntil! < b.busyUntil! || (a.busyUntil === b.busyUntil && a.id < b.id);

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

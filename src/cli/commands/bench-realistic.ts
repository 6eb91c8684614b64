import { peaks, requestSpans, scatterGather, SwarmPool, type InFlight, type PromptResult, type RunSummary } from '../../core/index.ts';
import type { TemplateSetting } from '../../core/templating/index.ts';
import type { SimStats } from '../../sim/server.ts';
import { startSimFleet, type SimFleet } from './bench-sim-fleet.ts';
import { REAL, type Say } from './bench-sim.ts';

/** Lorem answers stop at a sampled end-of-sequence between max_tokens/2 and max_tokens (the simulator's default). */
export const REAL_FLAGS = ['--reply', 'lorem', '--request-overhead-ms', `${REAL.overheadMs}`, '--ttft-ms', `${REAL.ttftMs}`, '--tpot-ms', `${REAL.tpotMs}`, '--max-num-seqs', `${REAL.maxNumSeqs}`];
export const SIM_PROCESSES = 2;
export const IDEAL_RULE = 'ideal = max over servers of (requests × request overhead + time its modeled sequences kept it busy)';
const ROUNDS = 3;

export interface Timed {
  wallMs: number;
  /** HTTP requests as the servers counted them, in all and by path. */
  requests: number;
  /** As the client counted them: more when some never reached a server (a failed connection, retried). */
  clientRequests: number;
  /** Generation requests (completions, chat, embeddings) as the servers counted them. */
  generationRequests: number;
  paths: Record<string, number>;
  idealMs: number;
  /** This process's CPU (the client's), ms. */
  cpuMs: number;
  /** Each simulator process's CPU, ms. */
  simCpuMs: number[];
  /** Since the run started: the last request sent, and the last answer's response headers (a batch's come when it is done). */
  lastSentMs: number;
  lastHeadersMs: number;
  /** The pool's cap on requests in flight, and the most prompts and requests it had open at once. */
  inFlight: InFlight;
  summary: RunSummary;
}

/**
 * One scatter over the fleet, every prompt answered; the client is this process. Batches take the
 * CLI's default path to the chat template (`auto`) unless told.
 */
export async function timedRun(fleet: SimFleet, pool: SwarmPool, prompts: string[], batch: boolean, template: TemplateSetting = 'auto'): Promise<Timed> {
  const before = await fleet.servers();
  const simBefore = fleet.cpuMs();
  const cpu = process.cpuUsage();
  const run = scatterGather(pool, prompts, { batch, maxTokens: REAL.maxTokens, keepResults: false, ...(batch ? { template } : {}) });
  let [lastSentMs, lastHeadersMs] = [0, 0];
  const results: PromptResult[] = [];
  run.on('result', (r) => {
    lastSentMs = Math.max(lastSentMs, r.timings.sentMs ?? 0);
    lastHeadersMs = Math.max(lastHeadersMs, r.timings.firstByteMs ?? 0);
    results.push(r);
  });
  const report = await run.done;
  const { user, system } = process.cpuUsage(cpu);
  const simAfter = fleet.cpuMs();
  if (report.summary.ok !== prompts.length) {
    // What went wrong, by kind (the first few): a figure from a run with failures would compare unlike work.
    const errors = [...new Set(results.filter((r) => r.status !== 'ok').map((r) => `${r.status}: ${r.error ?? ''}`))].slice(0, 5);
    throw new Error(`bench run lost prompts: ${report.summary.failed} failed, ${report.summary.cancelled} cancelled (${[report.error, ...errors].filter(Boolean).join('; ')})`);
  }
  const after = await fleet.servers();
  const paths = requestsByPath(before, after);
  const requests = Object.values(paths).reduce((a, b) => a + b, 0);
  // A request whose connection never got through (refused, reset, timed out while 8,000 connect at once) is
  // counted by the client, retried, and never seen by a server; one a server saw that the client did not count is a bug.
  if (requests > report.summary.httpRequests) throw new Error(`the client counted ${report.summary.httpRequests} requests, the servers ${requests}`);
  return {
    wallMs: report.summary.wallMs,
    requests,
    clientRequests: report.summary.httpRequests,
    generationRequests: after.reduce((sum, a, i) => sum + a.generationRequests - before[i]!.generationRequests, 0),
    paths,
    idealMs: idealMakespan(before, after),
    cpuMs: (user + system) / 1000,
    simCpuMs: simAfter.map((c, i) => c - simBefore[i]!),
    lastSentMs,
    lastHeadersMs,
    inFlight: { concurrency: pool.options.concurrency, ...peaks(results, requestSpans(results, batch ? 'batched' : 'individual')) },
    summary: report.summary,
  };
}

/** What the servers received between two readings of their counters, by path (every status). */
export function requestsByPath(before: SimStats[], after: SimStats[]): Record<string, number> {
  const paths: Record<string, number> = {};
  after.forEach((a, i) => {
    for (const [key, n] of Object.entries(a.httpRequests)) {
      const path = key.split(' ')[1]!;
      if (path === '/metrics') continue; // the bench's own readings of the fleet are not the run's
      const sent = n - (before[i]!.httpRequests[key] ?? 0);
      if (sent) paths[path] = (paths[path] ?? 0) + sent;
    }
  });
  return paths;
}

/** `/v1/completions 1,000 · /tokenize 2`, the most first. */
export const pathsLine = (paths: Record<string, number>) =>
  Object.entries(paths)
    .sort((a, b) => b[1] - a[1])
    .map(([path, n]) => `${path} ${n.toLocaleString('en-US')}`)
    .join(' · ');

/** The longest any one server was modeled busy: its serialized front-end time plus its sequences' running time. */
function idealMakespan(before: SimStats[], after: SimStats[]): number {
  let ideal = 0;
  after.forEach((a, i) => {
    const requests = a.generationRequests - before[i]!.generationRequests;
    ideal = Math.max(ideal, a.busyMs - before[i]!.busyMs + requests * REAL.overheadMs);
  });
  return ideal;
}

/** `endpoints` simulated ports over SIM_PROCESSES processes and a pool over them, for `use`. */
export async function withFleet<T>(endpoints: number, concurrency: number, use: (fleet: SimFleet, pool: SwarmPool) => Promise<T>, maxNumSeqs = REAL.maxNumSeqs): Promise<T> {
  const fleet = await startSimFleet(endpoints, SIM_PROCESSES, [...REAL_FLAGS, '--max-num-seqs', String(maxNumSeqs)]);
  const pool = new SwarmPool(fleet.endpoints, { concurrency, maxNumSeqs });
  try {
    await scatterGather(pool, promptList(endpoints), { maxTokens: 1 }).done; // connections up, as in a long session
    return await use(fleet, pool);
  } finally {
    await pool.close();
    await fleet.stop();
  }
}

export const promptList = (n: number) => Array.from({ length: n }, (_, i) => `Prompt ${i}: say something about ${i}.`);

/** How the two cores were shared during a run. */
export const cores = (t: Timed) =>
  `client ${s(t.cpuMs)} CPU, simulator processes ${t.simCpuMs.map(s).join(' + ')} CPU, in ${s(t.wallMs)} wall (${((t.cpuMs + t.simCpuMs.reduce((a, b) => a + b, 0)) / t.wallMs).toFixed(2)} of the 2 cores: CPU ÷ wall)`;

/**
 * Batched scatter of 100,000 prompts over 1,000 endpoints at the realistic settings against the ideal
 * makespan, on the default path to the chat template, with raw batches alternating (ABBA) for what
 * the template costs. A batch counts once against the concurrency cap, so at 1,000 endpoints the cap
 * is 1,000: at 512 half the endpoints would wait for the other half by design.
 */
export async function realisticBench(say: Say): Promise<void> {
  const [prompts, endpoints] = [100_000, 1_000];
  const concurrency = Math.max(REAL.concurrency, endpoints);
  const { templated: runs, raw } = await templatedAndRaw(prompts, endpoints, concurrency, ROUNDS);
  const best = [...runs].sort((a, b) => a.wallMs / a.idealMs - b.wallMs / b.idealMs)[Math.floor(runs.length / 2)]!;
  say();
  say(`${prompts.toLocaleString('en-US')} prompts × ${endpoints.toLocaleString('en-US')} endpoints batched (the default path to the chat template), concurrency ${concurrency} (a batch counts once; 512 would send half the batches in a second wave), client in this process`);
  say(`  wall / ideal makespan = ${(best.wallMs / best.idealMs).toFixed(3)}× (median of ${ROUNDS}: ${runs.map((r) => (r.wallMs / r.idealMs).toFixed(3)).join(' ')}; target ≤ 1.05×); wall ${s(best.wallMs)}, ideal ${s(best.idealMs)}`);
  say(`  where the time went: last request sent at ${s(best.lastSentMs)}; last answer's headers at ${s(best.lastHeadersMs)} (servers and transport, ${s(best.lastHeadersMs - best.idealMs)} past the ideal); the client done ${s(best.wallMs - best.lastHeadersMs)} after that`);
  say(`  cores: ${cores(best)}`);
  say(templateLine(prompts, endpoints, runs, raw));
}

/** Templated vs raw batches at 10,000 × 100 (the 100,000 × 1,000 line comes with the realistic section). */
export async function templateCostBench(say: Say): Promise<void> {
  const [prompts, endpoints] = [10_000, 100];
  const { templated, raw } = await templatedAndRaw(prompts, endpoints, REAL.concurrency, ROUNDS);
  say();
  say(templateLine(prompts, endpoints, templated, raw));
}

/** Rounds of the default (templated) and raw batched paths on one fleet and pool, alternating ABBA so neither always goes first. */
async function templatedAndRaw(prompts: number, endpoints: number, concurrency: number, rounds: number): Promise<{ templated: Timed[]; raw: Timed[] }> {
  return withFleet(endpoints, concurrency, async (fleet, pool) => {
    const list = promptList(prompts);
    const out = { templated: [] as Timed[], raw: [] as Timed[] };
    for (let round = 0; round < rounds; round++) {
      for (const arm of round % 2 ? (['raw', 'templated'] as const) : (['templated', 'raw'] as const)) {
        out[arm].push(await timedRun(fleet, pool, list, true, arm === 'templated' ? 'auto' : 'none'));
      }
    }
    return out;
  });
}

function templateLine(prompts: number, endpoints: number, templated: Timed[], raw: Timed[]): string {
  const med = (runs: Timed[], f: (t: Timed) => number) => [...runs.map(f)].sort((a, b) => a - b)[Math.floor((runs.length - 1) / 2)]!;
  const [tw, rw, tc, rc] = [med(templated, (t) => t.wallMs), med(raw, (t) => t.wallMs), med(templated, (t) => t.cpuMs), med(raw, (t) => t.cpuMs)];
  return [
    `  templated vs raw batched, ${prompts.toLocaleString('en-US')} × ${endpoints.toLocaleString('en-US')} (medians of ${templated.length}, alternating): wall ${s(tw)} vs ${s(rw)} = ${(tw / rw).toFixed(2)}× (target ≤ 1.2×); client CPU ${s(tc)} vs ${s(rc)} = ${(tc / rc).toFixed(2)}×`,
    `    requests, as the servers counted them: templated first round ${pathsLine(templated[0]!.paths)}; later rounds ${pathsLine(templated.at(-1)!.paths)}; raw ${pathsLine(raw[0]!.paths)}`,
  ].join('\n');
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

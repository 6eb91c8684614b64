import { arrivalGaps, loadRequests, parseSlo, scatterGather, sloText, SwarmPool, sustainedLoad, sweepRows, syntheticPrompt, type RunSummary } from '../../core/index.ts';
import { mulberry32 } from '../../sim/random.ts';
import { REAL } from './bench-sim.ts';
import type { Say, StartSim } from './bench-sim.ts';
import { sweepTable } from './run-experiment.ts';

/** The sweep: individual requests at three concurrencies, repeated; then sustained load against one SLO. */
const SWEEP = { endpoints: 4, prompts: 256, maxTokens: 16, concurrencies: [16, 64, 256], repetitions: 3 };
const LOAD = { endpoints: 4, durationS: 5, rate: 40, inputLen: 100, outputLen: 16, slo: 'ttft=300,tpot=25' };

/** `bench --only sweep`: a 3-point concurrency sweep (median and IQR over repetitions) and goodput under one SLO. */
export async function sweepBench(say: Say, startSim: StartSim): Promise<void> {
  const sim = await startSim(SWEEP.endpoints, ['--max-num-seqs', String(REAL.maxNumSeqs)]);
  const pool = new SwarmPool(sim.endpoints, { concurrency: SWEEP.concurrencies.reduce((m, c) => Math.max(m, c), 1), hedge: false });
  try {
    say();
    say(`concurrency sweep: ${SWEEP.prompts} individual requests over ${SWEEP.endpoints} simulated servers (ttft ${REAL.ttftMs} ms, tpot ${REAL.tpotMs} ms), max_tokens ${SWEEP.maxTokens}, ${SWEEP.repetitions} repetitions per point, interleaved`);
    const random = mulberry32(3);
    const prompts = Array.from({ length: SWEEP.prompts }, () => syntheticPrompt(64, random));
    const runs = new Map<number, RunSummary[]>(SWEEP.concurrencies.map((c) => [c, []]));
    for (let rep = 0; rep < SWEEP.repetitions; rep++) {
      for (const c of SWEEP.concurrencies) {
        const report = await scatterGather(pool.withConcurrency(c), prompts, { batch: false, maxTokens: SWEEP.maxTokens, keepResults: false }).done;
        if (report.summary.ok !== SWEEP.prompts) throw new Error(`sweep lost prompts at concurrency ${c}: ${report.error ?? ''}`);
        runs.get(c)!.push(report.summary);
      }
    }
    const rows = sweepRows(SWEEP.concurrencies.map((c) => ({ value: c, arm: 'individual', summaries: runs.get(c)! })));
    for (const metric of ['wall_s', 'prompt_throughput'] as const) for (const line of sweepTable('concurrency', metric, rows, true).split('\n')) say(`  ${line}`);

    const slo = parseSlo(LOAD.slo);
    const load = mulberry32(5);
    const report = await sustainedLoad(pool.withConcurrency(512), {
      durationMs: LOAD.durationS * 1000,
      nextGapMs: arrivalGaps(LOAD.rate, 'poisson', load),
      next: loadRequests({ inputLen: LOAD.inputLen }, LOAD.outputLen, 0.25, load),
      slo,
    }).done;
    const s = report.summary;
    say();
    say(`goodput: ${LOAD.rate} req/s Poisson arrivals for ${LOAD.durationS} s over ${LOAD.endpoints} servers, ~${LOAD.inputLen} tokens in, ~${LOAD.outputLen} out (± 25 %), SLO ${sloText(slo)}`);
    say(`  ${s.prompts} requests (${s.ok} ok) in ${(s.wallMs / 1000).toFixed(2)} s: request throughput ${s.promptThroughput.toFixed(2)} req/s, goodput ${s.goodput!.perSecond.toFixed(2)} req/s (${s.goodput!.good} within the SLO); TTFT p90 ${s.ttft?.p90Ms.toFixed(0)} ms, TPOT p90 ${s.tpot?.p90Ms.toFixed(1)} ms`);
  } finally {
    await pool.close();
    await sim.stop();
  }
}

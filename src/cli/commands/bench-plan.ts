import { drawLength, fitLatencyModel, predictWall, scatterGather, subpool, SwarmPool, syntheticPrompt } from '../../core/index.ts';
import { mulberry32 } from '../../sim/random.ts';
import type { Say, StartSim } from './bench-resilience.ts';

/**
 * The planner's check (issue 24): fitted on one streamed individual run on the modeled vLLM scheduler,
 * three batched runs of other sizes predicted and measured. Slow factor 4 paces the modeled L40S steps
 * (~24 ms) at ~96 ms, so this machine's lag is a small part of each.
 */
const PLAN = { endpoints: 4, maxNumSeqs: 8, slow: 4, maxTokens: 24, fit: { prompts: 64, concurrency: 32 }, sizes: [[4, 64], [2, 48], [3, 96]] as const };

export async function planBench(say: Say, startSim: StartSim): Promise<void> {
  const sim = await startSim(PLAN.endpoints, ['--scheduler', 'vllm', '--gpu', 'l40s', '--max-num-seqs', String(PLAN.maxNumSeqs), '--slow-factor', String(PLAN.slow)]);
  const pool = new SwarmPool(sim.endpoints, { concurrency: PLAN.fit.concurrency, hedge: false });
  try {
    const random = mulberry32(11);
    const prompts = Array.from({ length: 96 }, () => syntheticPrompt(drawLength({ len: 100, rangeRatio: 0.4 }, random), random));
    say();
    say(`capacity planner: fitted on ${PLAN.fit.prompts} individual streamed requests (${PLAN.fit.concurrency} in flight) over ${PLAN.endpoints} simulated vLLM servers (--scheduler vllm, modeled L40S, max-num-seqs ${PLAN.maxNumSeqs}, slow factor ${PLAN.slow}), max_tokens ${PLAN.maxTokens}; then batched runs of other sizes`);
    const fit = await scatterGather(pool, prompts.slice(0, PLAN.fit.prompts), { batch: false, stream: true, maxTokens: PLAN.maxTokens }).done;
    const model = fitLatencyModel(fit.results, PLAN.maxNumSeqs);
    say(`  model: step ${model.stepMs.toFixed(1)} ms + ${model.perSeqMs.toFixed(2)} ms per sequence, prefill ${model.prefillMsPerToken.toFixed(3)} ms per prompt token, overhead ${model.overheadMs.toFixed(0)} ms; the fitted run measured ${(fit.summary.wallMs / 1000).toFixed(2)} s`);
    say('  endpoints × prompts   predicted   measured wall   error   busiest server\'s modeled time × slow factor');
    for (const [endpoints, n] of PLAN.sizes) {
      const before = (await sim.stats()).servers.map((s) => s.scheduler!.modeledMs);
      const run = await scatterGather(subpool.slice(pool, 0, endpoints), prompts.slice(0, n), { batch: true, maxTokens: PLAN.maxTokens, keepResults: false }).done;
      const after = (await sim.stats()).servers.map((s) => s.scheduler!.modeledMs);
      const modeled = Math.max(...after.map((a, i) => a - before[i]!)) * PLAN.slow;
      const predicted = predictWall(model, { endpoints, prompts: n, inFlight: endpoints, batched: true }).wallMs;
      const measured = run.summary.wallMs;
      say(`  ${`${endpoints} × ${n}`.padEnd(20)}  ${`${(predicted / 1000).toFixed(2)} s`.padEnd(10)}  ${`${(measured / 1000).toFixed(2)} s`.padEnd(14)}  ${`${(((predicted - measured) / measured) * 100).toFixed(1)} %`.padEnd(6)}  ${(modeled / 1000).toFixed(2)} s`);
    }
  } finally {
    await pool.close();
    await sim.stop();
  }
}

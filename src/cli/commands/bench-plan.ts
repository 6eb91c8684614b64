import { drawLength, fitLatencyModel, predictWall, scatterGather, subpool, SwarmPool, syntheticPrompt } from '../../core/index.ts';
import { mulberry32 } from '../../sim/random.ts';
import { procCpuMs } from './bench-process.ts';
import type { Say, StartSim } from './bench-sim.ts';

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
      const modeled = after.reduce((m, a, i) => Math.max(m, a - before[i]!), 0) * PLAN.slow;
      const predicted = predictWall(model, { endpoints, prompts: n, inFlight: endpoints, batched: true }).wallMs;
      const measured = run.summary.wallMs;
      say(`  ${`${endpoints} × ${n}`.padEnd(20)}  ${`${(predicted / 1000).toFixed(2)} s`.padEnd(10)}  ${`${(measured / 1000).toFixed(2)} s`.padEnd(14)}  ${`${(((predicted - measured) / measured) * 100).toFixed(1)} %`.padEnd(6)}  ${(modeled / 1000).toFixed(2)} s`);
    }
  } finally {
    await pool.close();
    await sim.stop();
  }
}

/**
 * The same check on real inference (llama.cpp, the project's tiny model on the CPU): fitted on one streamed
 * run, one run of twice the prompts (streamed too) predicted; three rounds, each fitting and measuring back
 * to back, and the median round's error besides each one's.
 *
 * Every answer is exactly max_tokens long (ignore_eos, as `vllm bench serve` holds its output lengths):
 * sampled at temperature 1, the tiny model's answers ended at EOS anywhere up to max_tokens, so two runs of
 * the same prompts did different work and the planner, which replays the fitted run's lengths, was asked to
 * foresee the dice. And on a shared machine the servers' pace is what the neighbours leave them: the same
 * 64 requests measured 2.4 s and 7.3 s a minute apart (load average 20 on 2 cores), while the model is of
 * the servers. So each run's servers' CPU share (their process's user + system CPU ÷ wall) is measured,
 * and the prediction is also given at the measured run's share (scaled by fit share ÷ run share): the
 * planner's error apart from how much CPU the machine gave. Both are printed.
 */
const LLAMA = { endpoints: 2, parallel: 4, maxTokens: 64, inFlight: 8, fit: 64, predict: 128, rounds: 3 };

export async function llamaPlanBench(say: Say, startSim: StartSim): Promise<void> {
  say();
  let sim;
  try {
    sim = await startSim(LLAMA.endpoints, ['--engine', 'llama', '--parallel', String(LLAMA.parallel)]);
  } catch (err) {
    say(`capacity planner on the llama engine: skipped (${(err as Error).message})`);
    return;
  }
  const pool = new SwarmPool(sim.endpoints, { concurrency: LLAMA.inFlight, hedge: false });
  const pid = sim.child.pid!;
  /** A run and the CPU its servers' process spent meanwhile. */
  const timed = async (n: number) => {
    const cpu = procCpuMs(pid);
    const run = await scatterGather(pool, prompts.slice(0, n), { ...options, stream: true }).done;
    return { run, share: (procCpuMs(pid) - cpu) / run.summary.wallMs };
  };
  const random = mulberry32(13);
  const words = ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'dog', 'ran', 'far'];
  const prompts = Array.from({ length: LLAMA.predict }, (_, i) => `Question ${i}: ${Array.from({ length: 20 + Math.floor(random() * 20) }, () => words[Math.floor(random() * words.length)]).join(' ')}`);
  const options = { batch: false, maxTokens: LLAMA.maxTokens, extra: { ignore_eos: true } };
  try {
    // A first run warms llama.cpp's contexts, which the model would otherwise count as the servers' speed.
    await scatterGather(pool, prompts.slice(0, LLAMA.inFlight), { ...options, keepResults: false }).done;
    say(`capacity planner on the llama engine (${LLAMA.endpoints} servers, --parallel ${LLAMA.parallel}, ${LLAMA.maxTokens} tokens per answer (ignore_eos), ${LLAMA.inFlight} in flight): fitted on ${LLAMA.fit} streamed requests, ${LLAMA.predict} predicted; ${LLAMA.rounds} rounds; servers' CPU share = their process's CPU ÷ wall`);
    const raw: number[] = [];
    const atShare: number[] = [];
    for (let round = 1; round <= LLAMA.rounds; round++) {
      const fit = await timed(LLAMA.fit);
      const model = fitLatencyModel(fit.run.results, LLAMA.parallel);
      // Streamed as the fitted run was: llama.cpp's streamed tokens cost the serving process time of its own.
      const measured = await timed(LLAMA.predict);
      const predicted = predictWall(model, { endpoints: LLAMA.endpoints, prompts: LLAMA.predict, inFlight: LLAMA.inFlight }).wallMs;
      // The fitted run predicted too: the model's own error, apart from the machine's pace changing between runs.
      const itself = predictWall(model, { endpoints: LLAMA.endpoints, prompts: LLAMA.fit, inFlight: LLAMA.inFlight }).wallMs;
      const wall = measured.run.summary.wallMs;
      const scaled = (predicted * fit.share) / measured.share;
      raw.push((predicted - wall) / wall);
      atShare.push((scaled - wall) / wall);
      say(`  round ${round}: step ${model.stepMs.toFixed(1)} ms + ${model.perSeqMs.toFixed(2)} ms per sequence, overhead ${model.overheadMs.toFixed(0)} ms; fitted run predicted ${secs(itself)}, measured ${secs(fit.run.summary.wallMs)} (CPU share ${fit.share.toFixed(2)}); ${LLAMA.predict} requests: predicted ${secs(predicted)}, measured ${secs(wall)} (CPU share ${measured.share.toFixed(2)}), error ${pct(raw.at(-1)!)}; at the measured run's CPU share predicted ${secs(scaled)}, error ${pct(atShare.at(-1)!)}`);
    }
    say(`  median round's error ${pct(medianError(raw))}; at equal CPU share ${pct(medianError(atShare))}`);
  } finally {
    await pool.close();
    await sim.stop();
  }
}

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** The round whose error is the median in size, with its sign. */
function medianError(errors: readonly number[]): number {
  return [...errors].sort((a, b) => Math.abs(a) - Math.abs(b))[Math.floor(errors.length / 2)]!;
}

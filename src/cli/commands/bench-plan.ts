import { loadavg } from 'node:os';
import { drawLength, fitLatencyModel, median, predictWall, scatterGather, subpool, SwarmPool, syntheticPrompt } from '../../core/index.ts';
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
 * run, one run of twice the prompts (streamed too) predicted, in rounds.
 *
 * What made it unstable, and what is measured instead:
 * - Every answer is exactly max_tokens long (ignore_eos, as `vllm bench serve` holds its output lengths).
 *   Sampled at temperature 1, the tiny model's answers ended at EOS anywhere up to max_tokens, so two runs
 *   of the same prompts did different work and the planner, which replays the fitted run's lengths, was
 *   asked to foresee the dice.
 * - On a shared 2-core machine the servers' pace is what the neighbours leave them: the same 64 requests
 *   took 4.4 s and 19.5 s minutes apart at load average 20, one request 175 ms or 1.1 s within a run. One
 *   pair of runs measures the neighbours. So the check is the median prediction against the median
 *   measurement over the rounds, each round's error printed too, with the servers' CPU share (their
 *   process's CPU ÷ wall) to show how far the pace moved.
 * - The run second in a round had the more CPU in 6 of 7 rounds (e.g. 0.50 then 0.85): the rounds swap
 *   which goes first, as compare's arms do, so neither always gets the better turn.
 */
const LLAMA = { endpoints: 2, parallel: 4, maxTokens: 64, inFlight: 8, fit: 64, predict: 128, rounds: 6 };

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
  /** A run and the CPU share its servers' process had meanwhile. */
  const timed = async (n: number) => {
    const cpu = procCpuMs(pid);
    const run = await scatterGather(pool, prompts.slice(0, n), { ...options, stream: true }).done;
    return { run, share: (procCpuMs(pid) - cpu) / run.summary.wallMs };
  };
  const random = mulberry32(13);
  const words = ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'dog', 'ran', 'far'];
  const prompts = Array.from({ length: LLAMA.predict }, (_, i) => `Question ${i}: ${Array.from({ length: 20 + Math.floor(random() * 20) }, () => words[Math.floor(random() * words.length)]).join(' ')}`);
  const options = { batch: false, maxTokens: LLAMA.maxTokens, extra: { ignore_eos: true } };
  const scenario = (prompts: number) => ({ endpoints: LLAMA.endpoints, prompts, inFlight: LLAMA.inFlight });
  try {
    // A first run warms llama.cpp's contexts, which the model would otherwise count as the servers' speed.
    await scatterGather(pool, prompts.slice(0, LLAMA.inFlight), { ...options, keepResults: false }).done;
    say(`capacity planner on the llama engine (${LLAMA.endpoints} servers, --parallel ${LLAMA.parallel}, ${LLAMA.maxTokens} tokens per answer (ignore_eos), ${LLAMA.inFlight} in flight): fitted on ${LLAMA.fit} streamed requests, ${LLAMA.predict} predicted; ${LLAMA.rounds} rounds, swapping which of the two runs first; load average ${loadavg()[0]!.toFixed(1)}`);
    const predictions: number[] = [];
    const walls: number[] = [];
    for (let round = 1; round <= LLAMA.rounds; round++) {
      // Streamed as the fitted run was: llama.cpp's streamed tokens cost the serving process time of its own.
      const fitFirst = round % 2 === 1;
      const first = await timed(fitFirst ? LLAMA.fit : LLAMA.predict);
      const second = await timed(fitFirst ? LLAMA.predict : LLAMA.fit);
      const [fit, measured] = fitFirst ? [first, second] : [second, first];
      const model = fitLatencyModel(fit.run.results, LLAMA.parallel);
      const predicted = predictWall(model, scenario(LLAMA.predict)).wallMs;
      // The fitted run predicted too: the model's own error, apart from the machine's pace moving between runs.
      const itself = predictWall(model, scenario(LLAMA.fit)).wallMs;
      const wall = measured.run.summary.wallMs;
      predictions.push(predicted);
      walls.push(wall);
      say(`  round ${round} (${fitFirst ? 'fitted run first' : 'measured run first'}): step ${model.stepMs.toFixed(1)} ms + ${model.perSeqMs.toFixed(2)} ms per sequence, overhead ${model.overheadMs.toFixed(0)} ms; fitted run predicted ${secs(itself)}, measured ${secs(fit.run.summary.wallMs)} (servers' CPU share ${fit.share.toFixed(2)}); ${LLAMA.predict} requests: predicted ${secs(predicted)}, measured ${secs(wall)} (CPU share ${measured.share.toFixed(2)}), error ${pct((predicted - wall) / wall)}`);
    }
    const p = median(predictions);
    const m = median(walls);
    say(`  over the rounds: median predicted ${secs(p)}, median measured ${secs(m)}, error ${pct((p - m) / m)}; load average ${loadavg()[0]!.toFixed(1)}`);
  } finally {
    await pool.close();
    await sim.stop();
  }
}

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

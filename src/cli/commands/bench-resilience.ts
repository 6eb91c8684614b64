import { scatterGather, SwarmPool, type Endpoint, type PoolOptions, type ScatterOptions } from '../../core/index.ts';
import type { Say, SimProcess, StartSim } from './bench-sim.ts';

/** Long enough answers that a run has a middle to fail in: 32 lorem tokens at 10 ms each, every prompt. */
const FLAGS = ['--ttft-ms', '50', '--tpot-ms', '10', '--max-num-seqs', '256'];
const GEN = { maxTokens: 32, extra: { ignore_eos: true } };

/**
 * What a misbehaving swarm costs, with default options: an endpoint stopped mid-run (SIGSTOP: the
 * process hangs with its connections open), two of twenty killed mid-run (kill -9), each against the
 * same run on a healthy swarm; and streamed against non-streamed batches. Every run must answer
 * every prompt.
 */
export async function resilienceBench(say: Say, startSim: StartSim): Promise<void> {
  say();
  say(`resilience (default options; ttft 50 ms, tpot 10 ms, 32 tokens, ignore_eos): every run must answer every prompt`);
  for (const [label, mode] of [
    ['batched', { batch: true }],
    ['batched, streamed', { batch: true, stream: true }],
    ['individual', { batch: false }],
  ] as Array<[string, ScatterOptions]>) {
    const healthy = await timed(startSim, { healthy: 7, victims: 1, prompts: 2_000, mode });
    const hung = await timed(startSim, { healthy: 7, victims: 1, prompts: 2_000, mode, strike: (victims) => victims.forEach((v) => v.child.kill('SIGSTOP')) });
    say(`  1 of 8 endpoints stopped mid-run, 2,000 prompts, ${label}: ${s(hung)} vs ${s(healthy)} healthy → hung-endpoint delay ${s(hung - healthy)}`);
  }
  const ideal = await timed(startSim, { healthy: 18, victims: 0, prompts: 10_000, mode: { batch: true } });
  const failover = await timed(startSim, { healthy: 18, victims: 2, prompts: 10_000, mode: { batch: true }, strike: (victims) => victims.forEach((v) => v.child.kill('SIGKILL')) });
  say(`  2 of 20 endpoints killed mid-run, 10,000 prompts batched: ${s(failover)} vs ${s(ideal)} on the 18 survivors alone → ${(failover / ideal).toFixed(2)}× the healthy-only makespan`);
  const plain = await timed(startSim, { healthy: 100, victims: 0, prompts: 10_000, mode: { batch: true } });
  const streamed = await timed(startSim, { healthy: 100, victims: 0, prompts: 10_000, mode: { batch: true, stream: true } });
  say(`  10,000 prompts × 100 endpoints batched: streamed ${s(streamed)} vs not streamed ${s(plain)} → ${(streamed / plain).toFixed(2)}×`);
}

/** One timed run: `healthy` endpoints in one simulator process, `victims` in processes of their own. */
export interface Trial {
  healthy: number;
  victims: number;
  prompts: number;
  mode: ScatterOptions;
  /** Extra `swarm sim` flags of the victims (a slow one: `--slow-factor 4`). */
  victimFlags?: readonly string[];
  pool?: Partial<PoolOptions>;
  /** Hits the victims a third of the way into a batched wave on the healthy swarm (300 ms in). */
  strike?: (victims: SimProcess[]) => void;
}

/** Wall time of one run; it must answer every prompt. */
export async function timed(startSim: StartSim, t: Trial): Promise<number> {
  const sims = await Promise.all([startSim(t.healthy, FLAGS), ...Array.from({ length: t.victims }, () => startSim(1, [...FLAGS, ...(t.victimFlags ?? [])]))]);
  const endpoints: Endpoint[] = sims.flatMap((p) => p.endpoints);
  const pool = new SwarmPool(endpoints, t.pool);
  try {
    const list = Array.from({ length: t.prompts }, (_, i) => `Prompt ${i}: say something about ${i}.`);
    const run = scatterGather(pool, list, { ...t.mode, ...GEN, keepResults: false });
    const timer = t.strike ? setTimeout(() => t.strike!(sims.slice(1)), 300) : undefined;
    const report = await run.done;
    clearTimeout(timer);
    if (report.summary.ok !== t.prompts) throw new Error(`bench run lost prompts: ${report.summary.failed} failed, ${report.summary.cancelled} cancelled (${report.error ?? ''})`);
    return report.summary.wallMs;
  } finally {
    await pool.close();
    for (const sim of sims) sim.child.kill('SIGKILL');
    await Promise.all(sims.map((sim) => sim.stop()));
  }
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

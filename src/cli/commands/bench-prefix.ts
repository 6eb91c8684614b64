import { scatterGather, SwarmPool, type RouteStrategy } from '../../core/index.ts';
import { mulberry32 } from '../../sim/random.ts';
import type { Say, StartSim } from './bench-sim.ts';

/** The scenario of issue 24: prompts sharing 8 long prefixes over 8 endpoints. */
export const PREFIX_SCENARIO = { endpoints: 8, prefixes: 8, prompts: 400, prefixWords: 1_000, concurrency: 64, maxTokens: 16 };
/**
 * KV cache per server, tokens: smaller than the 8 prefixes together (~16,000 tokens) but room for two,
 * the situation of a real swarm whose working set of prefixes outgrows each server's cache.
 */
export const PREFIX_KV_TOKENS = 4_096;
export const PREFIX_SIM_FLAGS = ['--scheduler', 'vllm', '--kv-cache-tokens', String(PREFIX_KV_TOKENS), '--max-model-len', String(PREFIX_KV_TOKENS)];

/**
 * `count` prompts, each one of `prefixes` long shared documents (~2 tokens a word) and a question of
 * its own; which document is drawn from a seeded generator, so neither round-robin's i mod n nor
 * anything else lines the documents up with the endpoints by accident.
 */
export function sharedPrefixPrompts(count: number, prefixes: number, words: number, seed = 7): string[] {
  const docs = Array.from({ length: prefixes }, (_, k) => `Document ${k}. ${Array.from({ length: words }, (_, j) => `w${(j * 7 + k * 13) % 97}`).join(' ')}`);
  const random = mulberry32(seed);
  return Array.from({ length: count }, (_, i) => `${docs[Math.floor(random() * prefixes)]}\nQuestion ${i}: what does the document say?`);
}

export interface PrefixTrial {
  route: RouteStrategy;
  batch: boolean;
  wallMs: number;
  /** The servers' own counters, summed: prompt tokens looked up and found in their prefix caches. */
  queries: number;
  hits: number;
  preemptions: number;
  /** The busiest server's modeled GPU time (not wall time). */
  modeledMs: number;
}

/** One scatter of the shared-prefix prompts on fresh simulated servers (cold caches), routed by `route`. */
export async function prefixTrial(startSim: StartSim, route: RouteStrategy, batch: boolean, prompts: readonly string[]): Promise<PrefixTrial> {
  const sim = await startSim(PREFIX_SCENARIO.endpoints, PREFIX_SIM_FLAGS);
  const pool = new SwarmPool(sim.endpoints, { route, concurrency: PREFIX_SCENARIO.concurrency, hedge: false });
  try {
    const report = await scatterGather(pool, prompts, { batch, maxTokens: PREFIX_SCENARIO.maxTokens, keepResults: false }).done;
    if (report.summary.ok !== prompts.length) throw new Error(`prefix bench lost prompts: ${report.summary.failed} failed (${report.error ?? ''})`);
    const servers = (await sim.stats()).servers.map((s) => s.scheduler!);
    const sum = (f: (c: (typeof servers)[number]) => number) => servers.reduce((t, c) => t + f(c), 0);
    return {
      route,
      batch,
      wallMs: report.summary.wallMs,
      queries: sum((c) => c.prefixQueries),
      hits: sum((c) => c.prefixHits),
      preemptions: sum((c) => c.preemptions),
      modeledMs: servers.reduce((m, c) => Math.max(m, c.modeledMs), 0),
    };
  } finally {
    await pool.close();
    await sim.stop();
  }
}

/** Prefix-cache hit rate and wall time of each routing strategy against round-robin, from the servers' counters. */
export async function prefixBench(say: Say, startSim: StartSim): Promise<void> {
  const { endpoints, prefixes, prompts: count, prefixWords, concurrency } = PREFIX_SCENARIO;
  const prompts = sharedPrefixPrompts(count, prefixes, prefixWords);
  say();
  say(
    `prefix caching: ${count} prompts sharing ${prefixes} documents of ~${(2 * prefixWords).toLocaleString('en-US')} tokens over ${endpoints} simulated vLLM servers (--scheduler vllm, modeled H100, KV cache ${PREFIX_KV_TOKENS.toLocaleString('en-US')} tokens each: two documents fit, eight do not), concurrency ${concurrency}; hit rate = vllm:prefix_cache_hits_total ÷ vllm:prefix_cache_queries_total over the servers`,
  );
  for (const batch of [false, true]) {
    const trials: PrefixTrial[] = [];
    for (const route of ['round-robin', 'prefix-aware', 'least-load', 'kv-cache'] as RouteStrategy[]) trials.push(await prefixTrial(startSim, route, batch, prompts));
    const rr = trials[0]!;
    const rate = (t: PrefixTrial) => t.hits / Math.max(1, t.queries);
    say(`  ${batch ? 'batched' : 'individual'}`);
    for (const t of trials) {
      say(
        `    ${t.route.padEnd(13)} hit rate ${(100 * rate(t)).toFixed(1).padStart(5)} % (${(rate(t) / Math.max(1e-9, rate(rr))).toFixed(2)}× round-robin's) · wall ${(t.wallMs / 1000).toFixed(2)} s (${(t.wallMs / rr.wallMs).toFixed(2)}×) · busiest server's modeled GPU time ${(t.modeledMs / 1000).toFixed(2)} s · preemptions ${t.preemptions}`,
      );
    }
  }
}

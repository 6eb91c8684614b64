import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { request } from 'undici';
import { scatterGather, type Endpoint, type RouteStrategy } from '../src/core/index.ts';
import { sharedPrefixPrompts } from '../src/cli/commands/bench-prefix.ts';
import { until } from './helpers/patience.ts';
import { Fixture } from './helpers/swarm.ts';

// Routing against the vLLM scheduler model: the strategies read the servers' real queue and KV
// pressure, and prefix-aware routing meets warm prefix caches. Every figure comes from the servers' /metrics.

const fx = new Fixture();
afterEach(() => fx.close());

const url = (e: Endpoint, path: string) => `http://${e.host}:${e.port}${path}`;

/** Sums of `names` over the endpoints' /metrics. */
async function counters(endpoints: readonly Endpoint[], ...names: string[]): Promise<number[]> {
  const texts = await Promise.all(endpoints.map(async (e) => (await request(url(e, '/metrics'))).body.text()));
  return names.map((name) =>
    texts.reduce((sum, text) => {
      const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
      assert.ok(m, `${name} in /metrics`);
      return sum + Number(m[1]);
    }, 0),
  );
}

describe('routing against the vLLM scheduler model', () => {
  it('kv-cache follows KV pressure and least-load follows the queue, each from /metrics: they disagree where the two differ', async () => {
    // Slow steps hold the sequences while the routed prompt is placed.
    const sim = await fx.sim(2, { scheduler: 'vllm', slowFactor: 20, kvCacheTokens: 16_384, maxModelLen: 8_192 });
    const [hog, busy] = sim.endpoints as [Endpoint, Endpoint];
    const held = new AbortController();
    let answered = 0;
    const hold = (e: Endpoint, prompt: string) =>
      request(url(e, '/v1/completions'), { method: 'POST', body: JSON.stringify({ prompt, max_tokens: 2_000, ignore_eos: true }), signal: held.signal })
        .then(async (res) => {
          answered++;
          await res.body.text();
        })
        .catch(() => undefined);
    // One sequence with a 6,000-token prompt fills a third of the hog's cache; four short ones barely touch the other's.
    const holding = [hold(hog, 'abcd '.repeat(6_000)), ...Array.from({ length: 4 }, (_, i) => hold(busy, `Hi ${i}.`))];
    await until(() => {
      assert.equal(answered, 0, 'a held request was answered before the others ran');
      return sim.servers[0]!.stats().running >= 1 && sim.servers[1]!.stats().running >= 4;
    }, 'the held requests to run', 15_000, { intervalMs: 5 });
    try {
      const [kvHog] = await counters([hog], 'vllm:kv_cache_usage_perc');
      const [kvBusy] = await counters([busy], 'vllm:kv_cache_usage_perc');
      assert.ok(kvHog! > 0.3 && kvBusy! < 0.01, `KV use from blocks: ${kvHog} vs ${kvBusy} (not running ÷ max-num-seqs)`);
      const placed = async (route: RouteStrategy): Promise<string | null> => {
        const pool = fx.pool(sim.endpoints, { route, hedge: false });
        const report = await scatterGather(pool, ['Where do I go?'], { batch: false, maxTokens: 1 }).done;
        assert.equal(report.summary.ok, 1);
        return report.results[0]!.endpoint;
      };
      assert.equal(await placed('kv-cache'), `${busy.host}:${busy.port}`, 'kv-cache avoids the full cache');
      assert.equal(await placed('least-load'), `${hog.host}:${hog.port}`, 'least-load avoids the longer queue');
    } finally {
      held.abort();
      await Promise.all(holding);
    }
  });

  for (const batch of [true, false]) {
    it(`${batch ? 'batched' : 'individual'}, prefix-aware meets warm caches: prompts sharing 8 long prefixes over 8 endpoints hit far more than round-robin, prefill less and keep the busiest server busy for less`, async () => {
      const prompts = sharedPrefixPrompts(160, 8, 1_000);
      const trial = async (route: RouteStrategy) => {
        // Fresh servers each time (cold caches); each holds two of the eight ~2,000-token documents, not all.
        const sim = await fx.sim(8, { scheduler: 'vllm', slowFactor: 0, kvCacheTokens: 4_096, maxModelLen: 4_096 });
        const pool = fx.pool(sim.endpoints, { route, hedge: false, concurrency: 64 });
        const report = await scatterGather(pool, prompts, { batch, maxTokens: 4 }).done;
        assert.equal(report.summary.ok, prompts.length);
        report.results.forEach((r, i) => assert.equal(r.prompt, prompts[i]));
        const [queries, hits] = await counters(sim.endpoints, 'vllm:prefix_cache_queries_total', 'vllm:prefix_cache_hits_total');
        // The GPU time the scheduler model gave its steps (not wall time, which the machine's load sets): the busiest server's bounds the run.
        const busiest = Math.max(...sim.servers.map((x) => x.stats().scheduler!.modeledMs));
        return { rate: hits! / queries!, prefilled: queries! - hits!, busiest };
      };
      const rr = await trial('round-robin');
      const pa = await trial('prefix-aware');
      const figures = `prefix-aware ${pa.rate.toFixed(3)} hit rate, busiest ${pa.busiest.toFixed(0)} ms; round-robin ${rr.rate.toFixed(3)}, ${rr.busiest.toFixed(0)} ms`;
      // The bar (≥ 2×); the bench measures ~5× at full size, each document on an endpoint of its own.
      assert.ok(pa.rate >= 2 * rr.rate, figures);
      assert.ok(pa.prefilled < rr.prefilled, `prompt tokens computed: ${pa.prefilled} vs ${rr.prefilled}`);
      assert.ok(pa.busiest < rr.busiest, figures);
    });
  }
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { SimServer, type SimOptions } from '../src/sim/index.ts';

async function withServer<T>(options: Partial<SimOptions>, fn: (server: SimServer, origin: string) => Promise<T>): Promise<T> {
  const server = new SimServer({ requestOverheadMs: 0, ...options });
  await server.start();
  try {
    return await fn(server, `http://127.0.0.1:${server.port}`);
  } finally {
    await server.close();
  }
}

const scrape = async (origin: string): Promise<string> => (await request(origin + '/metrics')).body.text();

/** Samples of `name` as [labels text, value]. */
function samples(text: string, name: string): Array<[string, number]> {
  return [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))].map((m) => [m[1]!, Number(m[2])]);
}

test('latency histograms: one TTFT, e2e and queue observation per sequence, tokens - 1 inter-token gaps; preemptions 0', async () => {
  await withServer({ ttftMs: 30, tpotMs: 5, maxNumSeqs: 1 }, async (_server, origin) => {
    const body = JSON.stringify({ prompt: ['a', 'b'], max_tokens: 4, ignore_eos: true });
    assert.equal((await request(origin + '/v1/completions', { method: 'POST', body })).statusCode, 200);
    const text = await scrape(origin);
    assert.match(text, /^# TYPE vllm:time_to_first_token_seconds histogram$/m);
    const count = (name: string): number => samples(text, `${name}_count`)[0]![1];
    const sum = (name: string): number => samples(text, `${name}_sum`)[0]![1];
    assert.equal(count('vllm:time_to_first_token_seconds'), 2);
    assert.equal(count('vllm:e2e_request_latency_seconds'), 2);
    assert.equal(count('vllm:request_queue_time_seconds'), 2);
    assert.equal(count('vllm:inter_token_latency_seconds'), 2 * 3);
    assert.ok(Math.abs(sum('vllm:inter_token_latency_seconds') - 6 * 0.005) < 1e-9);
    // One slot: the second sequence waited for the first (30 + 3 × 5 ms), the first did not.
    assert.ok(sum('vllm:request_queue_time_seconds') >= 0.04, String(sum('vllm:request_queue_time_seconds')));
    assert.ok(sum('vllm:time_to_first_token_seconds') >= 0.06 + sum('vllm:request_queue_time_seconds') - 1e-9);
    const buckets = samples(text, 'vllm:e2e_request_latency_seconds_bucket');
    assert.deepEqual(buckets.at(-1), ['engine="0",model_name="sim-model",le="+Inf"', 2]);
    assert.ok(buckets.every(([, v], i) => i === 0 || v >= buckets[i - 1]![1]), 'cumulative');
    assert.deepEqual(samples(text, 'vllm:num_preemptions_total'), [['engine="0",model_name="sim-model"', 0]]);
  });
});

test('--data-parallel K: gauges once per engine; the prompts of one list spread over the engines, each with its own slots', async () => {
  await withServer({ dataParallel: 2, maxNumSeqs: 1, ttftMs: 10_000, tpotMs: 0 }, async (server, origin) => {
    const send = (prompt: string[]) => request(origin + '/v1/completions', { method: 'POST', body: JSON.stringify({ prompt, max_tokens: 1 }) }).catch(() => undefined);
    const queued = async (count: number): Promise<void> => {
      while (server.stats().running + server.stats().waiting < count) await new Promise((r) => setImmediate(r));
    };
    // Spread, x and y run at once; on one engine y would wait for x's slot.
    const held = [send(['x', 'y'])];
    await queued(2);
    assert.deepEqual([server.stats().running, server.stats().waiting], [2, 0]);
    held.push(send(['z']));
    await queued(3);
    const text = await scrape(origin);
    const running = samples(text, 'vllm:num_requests_running');
    assert.deepEqual(running.map(([labels]) => labels), ['engine="0",model_name="sim-model"', 'engine="1",model_name="sim-model"']);
    assert.deepEqual(running.map(([, v]) => v), [1, 1]);
    assert.equal(samples(text, 'vllm:num_requests_waiting').reduce((s, [, v]) => s + v, 0), 1);
    // A percentage per engine: a reader must average or take the max, never sum.
    assert.deepEqual(samples(text, 'vllm:kv_cache_usage_perc').map(([, v]) => v), [1, 1]);
    assert.deepEqual([server.stats().running, server.stats().waiting], [2, 1]);
    await server.close();
    await Promise.all(held);
  });
});

test('generation_tokens_total moves during an unstreamed batch, one token per engine step of each running sequence, and never goes back (a cancelled list keeps its tokens)', async () => {
  await withServer({ ttftMs: 0, tpotMs: 20, maxNumSeqs: 4 }, async (_server, origin) => {
    const tokens = async () => samples(await scrape(origin), 'vllm:generation_tokens_total')[0]![1];
    const body = JSON.stringify({ prompt: ['a', 'b', 'c', 'd'], max_tokens: 50, ignore_eos: true });
    const answer = request(origin + '/v1/completions', { method: 'POST', body });
    const seen: number[] = [];
    // Poll while the list runs (50 steps of 20 ms): the counter climbs before any sequence finished.
    for (let t = Date.now(); Date.now() - t < 600; ) {
      seen.push(await tokens());
      await new Promise((r) => setTimeout(r, 50));
    }
    const success = samples(await scrape(origin), 'vllm:request_success_total').reduce((n, [, v]) => n + v, 0);
    assert.equal(success, 0, 'no sequence finished yet');
    assert.ok(seen.at(-1)! >= 4 * 20 && seen.at(-1)! < 4 * 50, `tokens mid-batch: ${seen.join(', ')}`);
    assert.ok(seen.every((v, i) => i === 0 || v >= seen[i - 1]!), `never back: ${seen.join(', ')}`);
    await (await answer).body.text();
    assert.equal(await tokens(), 4 * 50, 'every token once the list is done');
    // A list the client drops midway: its tokens stay counted.
    const ac = new AbortController();
    const dropped = request(origin + '/v1/completions', { method: 'POST', body, signal: ac.signal }).catch(() => null);
    await new Promise((r) => setTimeout(r, 300));
    const before = await tokens();
    ac.abort();
    await dropped;
    await new Promise((r) => setTimeout(r, 50));
    const after = await tokens();
    assert.ok(before > 200 && after >= before, `a dropped list keeps its tokens (${before} → ${after})`);
  });
});

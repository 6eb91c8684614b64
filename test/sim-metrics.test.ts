import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { Engine } from '../src/sim/engine.ts';
import { SimServer, type SimOptions } from '../src/sim/index.ts';
import type { SequenceTimes } from '../src/sim/metrics.ts';
import { until } from './helpers/patience.ts';

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

test('one slot, and a process late by more than a whole sequence: the second sequence still queues behind the first (modeled times never overlap)', async () => {
  const times: SequenceTimes[] = [];
  const engine = new Engine(1, 0, () => ({ ttftMs: 30, tpotMs: 5 }), (t) => times.push(t));
  // The request reached the server a second before this process got to it (as under load): the first
  // sequence's whole modeled time is over at once, and its slot is taken only then.
  await new Promise<void>((resolve) => {
    let done = 0;
    engine.submit([{ tokens: 4 }, { tokens: 4 }], { onDone: () => void (++done === 2 && resolve()) }, performance.now() - 1_000);
  });
  const queued = times.map((t) => t.queueMs).sort((a, b) => a - b);
  assert.equal(queued[0], 0, 'the first found its slot on arrival');
  assert.ok(queued[1]! >= 30 + 3 * 5, `the second waited for the first's 45 ms: ${queued[1]} ms`);
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
    let answered = false;
    const answer = request(origin + '/v1/completions', { method: 'POST', body }).finally(() => (answered = true));
    // Read while the list runs (50 steps of 20 ms), both figures from one scrape, until its answer comes:
    // the counter climbs before any sequence finished, however late this process reads.
    const seen: Array<{ tokens: number; finished: number }> = [];
    while (!answered) {
      const text = await scrape(origin);
      seen.push({ tokens: samples(text, 'vllm:generation_tokens_total')[0]![1], finished: samples(text, 'vllm:request_success_total').reduce((n, [, v]) => n + v, 0) });
      await new Promise((r) => setTimeout(r, 20));
    }
    const shown = seen.map((r) => `${r.tokens}/${r.finished}`).join(', ');
    assert.ok(seen.some((r) => r.finished === 0 && r.tokens >= 4 && r.tokens < 4 * 50), `tokens mid-batch with none finished: ${shown}`);
    assert.ok(seen.every((r, i) => i === 0 || r.tokens >= seen[i - 1]!.tokens), `never back: ${shown}`);
    await (await answer).body.text();
    assert.equal(await tokens(), 4 * 50, 'every token once the list is done');
    // A list the client drops midway: its tokens stay counted.
    const ac = new AbortController();
    const dropped = request(origin + '/v1/completions', { method: 'POST', body, signal: ac.signal }).catch(() => null);
    const before = await until(tokens, 'the second list to generate', 15_000, { ready: (n) => n > 4 * 50 });
    ac.abort();
    await dropped;
    await new Promise((r) => setTimeout(r, 50));
    const after = await tokens();
    assert.ok(before > 200 && after >= before, `a dropped list keeps its tokens (${before} → ${after})`);
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { resolveSimOptions, SimServer, type SimOptions } from '../src/sim/index.ts';
import { kvCacheTokens } from '../src/sim/step-model.ts';
import { until } from './helpers/patience.ts';

// The vLLM scheduler model, seen from outside: real HTTP to the simulator, figures read from its /metrics.
// slowFactor 0 runs the modeled GPU as fast as the process can; the modeled time still counts in
// swarm_sim:modeled_busy_seconds_total, so no assertion depends on a clock.

async function withServer<T>(options: Partial<SimOptions>, fn: (origin: string, server: SimServer) => Promise<T>): Promise<T> {
  const server = new SimServer({ requestOverheadMs: 0, scheduler: 'vllm', slowFactor: 0, ...options });
  await server.start();
  try {
    return await fn(`http://127.0.0.1:${server.port}`, server);
  } finally {
    await server.close();
  }
}

/** The value of an unlabelled-by-us metric (first sample of `name`). */
async function metric(origin: string, name: string): Promise<number> {
  const text = await (await request(origin + '/metrics')).body.text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  assert.ok(m, `${name} in /metrics`);
  return Number(m[1]);
}

async function complete(origin: string, body: object): Promise<{ usage: { prompt_tokens: number; completion_tokens: number } }> {
  const res = await request(origin + '/v1/completions', { method: 'POST', body: JSON.stringify(body) });
  const json = (await res.body.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
  assert.equal(res.statusCode, 200, JSON.stringify(json));
  return json;
}

/** A prompt of about `tokens` tokens of the simulated tokenizer, distinct from the first token on. */
const longPrompt = (i: number, tokens: number): string => `Prompt ${i}: ${'abcd '.repeat(tokens)}`;

test('200 prompts of ~2,100 tokens cost far more modeled time and steps than one short prompt', async () => {
  const cost = async (prompts: string[]): Promise<{ seconds: number; steps: number; promptTokens: number }> =>
    withServer({}, async (origin) => {
      const { usage } = await complete(origin, { prompt: prompts, max_tokens: 16, ignore_eos: true });
      return { seconds: await metric(origin, 'swarm_sim:modeled_busy_seconds_total'), steps: await metric(origin, 'swarm_sim:engine_steps_total'), promptTokens: usage.prompt_tokens };
    });
  const long = await cost(Array.from({ length: 200 }, (_, i) => longPrompt(i, 2_100)));
  const short = await cost(['Say hi.']);
  assert.ok(long.promptTokens > 200 * 2_100, String(long.promptTokens));
  // Prefill of 420,000 tokens in 8,192-token chunks: at least 52 steps before the first decode step.
  assert.ok(long.steps >= Math.ceil(long.promptTokens / 8_192) + 15, `${long.steps} steps`);
  assert.equal(short.steps, 16, 'one prefill step that samples the first token, then 15 decode steps');
  assert.ok(long.seconds > 50 * short.seconds, `${long.seconds} s vs ${short.seconds} s modeled`);
});

test('chunked prefill: a 6,000-token prompt takes ceil(6,000 / budget) steps before its first token', async () => {
  for (const budget of [2_048, 512]) {
    await withServer({ maxNumBatchedTokens: budget }, async (origin) => {
      const { usage } = await complete(origin, { prompt: longPrompt(0, 6_000), max_tokens: 4, ignore_eos: true });
      assert.equal(await metric(origin, 'swarm_sim:engine_steps_total'), Math.ceil(usage.prompt_tokens / budget) + 3);
    });
  }
});

test('a decode step costs more with a bigger batch and longer contexts, but far less than one step per sequence; --max-num-seqs admits in waves', async () => {
  const run = async (prompts: string[], maxNumSeqs = 256): Promise<{ seconds: number; steps: number }> =>
    withServer({ maxNumSeqs }, async (origin) => {
      await complete(origin, { prompt: prompts, max_tokens: 100, ignore_eos: true });
      return { seconds: await metric(origin, 'swarm_sim:modeled_busy_seconds_total'), steps: await metric(origin, 'swarm_sim:engine_steps_total') };
    });
  const one = await run(['Say hi.']);
  const batch = await run(Array.from({ length: 64 }, (_, i) => `Say hi ${i}.`));
  const longer = await run(Array.from({ length: 64 }, (_, i) => longPrompt(i, 1_000)));
  assert.deepEqual([one.steps, batch.steps], [100, 100], 'all 64 sequences run together: one step per token, as for one');
  assert.ok(batch.seconds > one.seconds && batch.seconds < 4 * one.seconds, `64 sequences: ${batch.seconds} s, one: ${one.seconds} s (modeled)`);
  assert.ok(longer.seconds > 1.2 * batch.seconds, `their contexts of ~1,000 tokens: ${longer.seconds} s vs ${batch.seconds} s`);
  const waves = await run(Array.from({ length: 16 }, (_, i) => `Say hi ${i}.`), 4);
  assert.equal(waves.steps, 4 * 100, '16 sequences through 4 slots: four waves of 100 steps');
});

test('doubling the KV cache reduces preemptions; the counter is real and every prompt still completes', async () => {
  const preemptions = async (kv: number): Promise<number> =>
    withServer({ kvCacheTokens: kv, maxModelLen: 2_048, maxNumSeqs: 64 }, async (origin) => {
      const { usage } = await complete(origin, { prompt: Array.from({ length: 64 }, (_, i) => longPrompt(i, 400)), max_tokens: 300, ignore_eos: true });
      assert.equal(usage.completion_tokens, 64 * 300);
      assert.equal(await metric(origin, 'vllm:kv_cache_usage_perc'), 0, 'every block freed at the end');
      return metric(origin, 'vllm:num_preemptions_total');
    });
  const small = await preemptions(4_096);
  const large = await preemptions(8_192);
  const ample = await preemptions(64 * 720);
  assert.ok(small > 0, 'a cache of 4,096 tokens cannot hold 64 sequences of ~700');
  assert.ok(large < small, `${large} preemptions with 8,192 tokens, ${small} with 4,096`);
  assert.equal(ample, 0, 'a cache that holds every sequence preempts none');
});

test('prefix caching: a shared prefix gets hits counted in tokens; another cache_salt gets none', async () => {
  await withServer({}, async (origin) => {
    const prefix = 'You are a careful assistant. ' + 'context '.repeat(1_000);
    const first = await complete(origin, { prompt: prefix + 'Question one?', max_tokens: 1 });
    assert.equal(await metric(origin, 'vllm:prefix_cache_hits_total'), 0, 'a cold cache');
    assert.equal(await metric(origin, 'vllm:prefix_cache_queries_total'), first.usage.prompt_tokens);
    const second = await complete(origin, { prompt: prefix + 'Question two?', max_tokens: 1 });
    const hits = await metric(origin, 'vllm:prefix_cache_hits_total');
    assert.equal(hits % 16, 0, 'whole blocks');
    assert.ok(hits >= first.usage.prompt_tokens - 32 && hits < second.usage.prompt_tokens, `${hits} of ${second.usage.prompt_tokens} tokens`);
    assert.equal(await metric(origin, 'vllm:prefix_cache_queries_total'), first.usage.prompt_tokens + second.usage.prompt_tokens);
    await complete(origin, { prompt: prefix + 'Question three?', max_tokens: 1, cache_salt: 'other-tenant' });
    assert.equal(await metric(origin, 'vllm:prefix_cache_hits_total'), hits, 'salted apart: no hits');
  });
  await withServer({ enablePrefixCaching: false }, async (origin) => {
    await complete(origin, { prompt: 'same '.repeat(500), max_tokens: 1 });
    await complete(origin, { prompt: 'same '.repeat(500), max_tokens: 1 });
    assert.doesNotMatch(await (await request(origin + '/metrics')).body.text(), /prefix_cache_hits_total\{[^}]*\} [1-9]/);
  });
});

test('kv_cache_usage_perc is blocks held over blocks; cache_config_info states the modeled capacity', async () => {
  // Paced at 50 × the modeled GPU, a 4,000-token answer is held long enough to scrape it mid-way.
  await withServer({ slowFactor: 50, kvCacheTokens: 16_384 }, async (origin, server) => {
    const text = await (await request(origin + '/metrics')).body.text();
    assert.match(text, /^vllm:cache_config_info\{engine="0",model_name="sim-model",block_size="16",num_gpu_blocks="1024"\} 1\.0$/m);
    const controller = new AbortController();
    const held = request(origin + '/v1/completions', { method: 'POST', body: JSON.stringify({ prompt: longPrompt(0, 1_000), max_tokens: 4_000, ignore_eos: true }), signal: controller.signal }).catch(() => undefined);
    await until(() => server.stats().running > 0, 'the request to run');
    const usage = await metric(origin, 'vllm:kv_cache_usage_perc');
    // The prompt's ~1,004 tokens and its answer so far, in 16-token blocks, out of 1,024 blocks.
    assert.ok(usage >= 63 / 1024 && usage < 0.5, String(usage));
    controller.abort();
    await held;
    await until(() => server.stats().running === 0, 'the cancelled request to end');
    assert.equal(await metric(origin, 'vllm:kv_cache_usage_perc'), 0, 'a cancelled request gives its blocks back');
  });
});

test("vLLM's batch defaults by version and GPU; the modeled KV capacity; vLLM's refusal of a cache smaller than one sequence", () => {
  assert.equal(resolveSimOptions({}).scheduler, 'fixed', 'the fixed-latency model stays the default');
  assert.equal(resolveSimOptions({}).maxNumSeqs, 256);
  const latest = resolveSimOptions({ scheduler: 'vllm' });
  assert.deepEqual([latest.maxNumSeqs, latest.maxNumBatchedTokens, latest.kvCacheTokens], [1024, 8192, kvCacheTokens(80)]);
  assert.ok(latest.kvCacheTokens! > 350_000 && latest.kvCacheTokens! < 450_000, String(latest.kvCacheTokens));
  assert.equal(resolveSimOptions({ scheduler: 'vllm', vllmVersion: '0.8.4' }).maxNumSeqs, 256, 'before PR #17073');
  assert.equal(resolveSimOptions({ scheduler: 'vllm', gpu: 'a100-80gb' }).maxNumSeqs, 256, 'A100s keep the small defaults');
  assert.equal(resolveSimOptions({ gpu: 'a100-40gb' }).maxNumBatchedTokens, 2048, 'a GPU implies the vLLM scheduler');
  assert.equal(resolveSimOptions({ kvCacheTokens: 100_000, maxNumSeqs: 8 }).maxNumSeqs, 8, 'a given value wins');
  assert.throws(() => resolveSimOptions({ kvCacheTokens: 4_096, maxModelLen: 8_192 }), /must hold one sequence/);
});

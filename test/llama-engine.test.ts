import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { scatterGather, SwarmPool } from '../src/core/index.ts';
import type { SimCluster } from '../src/sim/cluster.ts';
import { startLlamaCluster } from '../src/sim/llama/cluster.ts';
import { tinyGguf } from '../src/sim/llama/tiny-gguf.ts';
import { FAST_RETRY } from './helpers/swarm.ts';
import { waitFor } from './helpers/cli.ts';

// What only real inference has: sequences that queue for a context, a client that leaves mid-answer.
describe('llama engine', () => {
  let one: SimCluster;
  let four: SimCluster;
  const origin = (c: SimCluster) => `http://127.0.0.1:${c.endpoints[0]!.port}`;
  const metric = async (c: SimCluster, name: string): Promise<number> => {
    const text = await (await fetch(`${origin(c)}/metrics`)).text();
    return Number(text.split('\n').find((l) => l.startsWith(`${name}{`))!.split(' ').at(-1));
  };

  before(async () => {
    [one, four] = await Promise.all([startLlamaCluster(1, {}, { parallel: 1, threads: 1 }), startLlamaCluster(1, {}, { parallel: 4, threads: 1 })]);
  });
  after(() => Promise.all([one.close(), four.close()]));

  it('the tiny model is the same bytes every time, and served with its real context', async () => {
    assert.ok(tinyGguf().equals(tinyGguf()));
    const models = (await (await fetch(`${origin(one)}/v1/models`)).json()) as { data: Array<{ id: string; max_model_len: number }> };
    assert.deepEqual(models.data.map((m) => [m.id, m.max_model_len]), [['swarm-lab-tiny', 1024]]);
  });

  it('greedy tokens do not depend on how many sequences decode together (--parallel 1 and 4 agree, round after round)', async () => {
    const prompts = Array.from({ length: 8 }, (_, i) => `prompt number ${i}: what comes next?`);
    const run = async (c: SimCluster) => {
      const pool = new SwarmPool(c.endpoints, { retry: FAST_RETRY });
      try {
        return (await scatterGather(pool, prompts, { maxTokens: 24, temperature: 0, template: 'server' }).done).results.map((r) => r.text);
      } finally {
        await pool.close();
      }
    };
    const serial = await run(one);
    // Rounds, each beside a serial run: two sequences sampled at once once crossed their answers mid-way
    // (llama.cpp's lazy output reorder, run on two threads) in about one round of seven on a loaded machine.
    for (let round = 0; round < 8; round++) {
      const [again, parallel] = await Promise.all([run(one), run(four)]);
      assert.deepEqual(again, serial, `round ${round}: --parallel 1 the same each time`);
      assert.deepEqual(parallel, serial, `round ${round}: --parallel 4 as --parallel 1`);
    }
  });

  it('a client that leaves mid-stream frees its sequence; the request queued behind it is then served', async () => {
    const tokensBefore = await metric(one, 'vllm:generation_tokens_total');
    const controller = new AbortController();
    const res = await fetch(`${origin(one)}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'go on', max_tokens: 1000, ignore_eos: true, stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // the stream has started: the only sequence is taken
    const queued = fetch(`${origin(one)}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'next', max_tokens: 4 }) });
    await waitFor(async () => ((await metric(one, 'vllm:num_requests_waiting')) === 1 ? true : undefined), 30_000, 'the second request to queue');
    controller.abort();
    const answer = (await (await queued).json()) as { choices: Array<{ text: string }> };
    assert.equal(answer.choices.length, 1);
    await waitFor(async () => ((await metric(one, 'vllm:num_requests_running')) === 0 ? true : undefined), 30_000, 'the sequences to be free');
    const generated = (await metric(one, 'vllm:generation_tokens_total')) - tokensBefore;
    assert.ok(generated < 1000, `the abandoned sequence stopped early (${generated} tokens generated)`);
  });
});

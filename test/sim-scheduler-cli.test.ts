import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { runCli, startSim, suiteDir } from './helpers/cli.ts';

const suite = suiteDir();

test('swarm sim --kv-cache-tokens, --max-num-batched-tokens and --no-enable-prefix-caching reach the vLLM scheduler model; a cache smaller than one sequence is bad input', async () => {
  const sim = await startSim(suite.dir, 'kv-hosts', 1, ['--kv-cache-tokens', '8192', '--max-num-batched-tokens', '512', '--no-enable-prefix-caching', '--slow-factor', '0']);
  const origin = `http://${sim.endpoints[0]}`;
  const metrics = async (): Promise<string> => (await request(origin + '/metrics')).body.text();
  assert.match(await metrics(), /^vllm:cache_config_info\{[^}]*block_size="16",num_gpu_blocks="512"\} 1\.0$/m, 'the scheduler model, implied by --kv-cache-tokens');
  const answer = (await (await request(origin + '/v1/completions', { method: 'POST', body: JSON.stringify({ prompt: 'abcd '.repeat(2_000), max_tokens: 2, ignore_eos: true }) })).body.json()) as { usage: { prompt_tokens: number } };
  const text = await metrics();
  assert.match(text, new RegExp(`^swarm_sim:engine_steps_total\\{[^}]*\\} ${Math.ceil(answer.usage.prompt_tokens / 512) + 1}\\.0$`, 'm'), 'prefill in 512-token chunks');
  assert.match(text, /^vllm:prefix_cache_queries_total\{[^}]*\} 0\.0$/m, 'no prefix cache: nothing looked up (vLLM still exports the counter)');
  await sim.stop();
  const bad = await runCli(['sim', '--endpoints', '1', '--kv-cache-tokens', '1000']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /kvCacheTokens \(1000\) must hold one sequence of maxModelLen \(8192\) tokens/);
});

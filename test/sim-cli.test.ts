import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { ensureBuilt, killAll, startSim, tempDir } from './helpers/cli.ts';

let dir: string;
let cleanup: () => Promise<void>;

before(async () => {
  ensureBuilt();
  ({ dir, cleanup } = await tempDir());
});

after(async () => {
  await killAll();
  await cleanup();
});

test('swarm sim --vllm-version wires the profile; --error-format, --data-parallel and --answer-tokens reach the servers', async () => {
  const flags = ['--vllm-version', '0.11.0', '--reasoning', 'auto', '--error-format', 'flat', '--data-parallel', '2', '--reply', 'lorem', '--answer-tokens', '3'];
  const sim = await startSim(dir, 'hosts', 1, flags);
  const origin = `http://${sim.endpoints[0]}`;
  const get = async (path: string): Promise<string> => (await request(origin + path)).body.text();
  const post = async (path: string, body: object): Promise<any> => (await request(origin + path, { method: 'POST', body: JSON.stringify(body) })).body.json();
  assert.deepEqual(JSON.parse(await get('/version')), { version: '0.11.0' });
  const error = await post('/v1/completions', { prompt: 'x', max_tokens: 9000 });
  assert.equal(error.object, 'error', 'flat, overriding the profile');
  assert.match(error.message, /'max_tokens' or 'max_completion_tokens' is too large: 9000/);
  const chat = await post('/v1/chat/completions', { messages: [{ role: 'user', content: 'q' }], max_tokens: 1000 });
  assert.ok('reasoning_content' in chat.choices[0].message && !('reasoning' in chat.choices[0].message));
  assert.ok(chat.usage.completion_tokens < 1000, 'stopped at its end-of-sequence');
  assert.equal((await get('/metrics')).match(/^vllm:num_requests_running\{/gm)?.length, 2);
  await sim.stop();
});

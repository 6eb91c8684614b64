import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { startSim, suiteDir } from './helpers/cli.ts';

const suite = suiteDir();

test('swarm sim --vllm-version wires the profile; --error-format, --data-parallel and --answer-tokens reach the servers', async () => {
  const flags = ['--vllm-version', '0.11.0', '--reasoning', 'auto', '--error-format', 'flat', '--data-parallel', '2', '--reply', 'lorem', '--answer-tokens', '3'];
  const sim = await startSim(suite.dir, 'hosts', 1, flags);
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

test('swarm sim stopped by a signal exits with its code, as every command does (SIGINT 130, SIGTERM 143, SIGHUP 129)', async () => {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
    const sim = await startSim(suite.dir, `hosts-${signal}`, 1);
    const exited = new Promise<number | null>((resolve) => sim.child.once('exit', (c) => resolve(c)));
    sim.child.kill(signal);
    assert.equal(await exited, code, signal);
  }
});

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { checkHealth, FALLBACK_MAX_MODEL_LEN, parseVllmMetrics, readLoad, scatterGather, type Endpoint } from '../src/core/index.ts';
import { recordHealth } from '../src/core/endpoints/endpoint-health.ts';
import { Fixture } from './helpers/swarm.ts';
import { until } from './helpers/patience.ts';

/**
 * A minimal OpenAI-compatible server that is not vLLM (or is an old one): no `/health`, no
 * `max_model_len`, no `usage`. It stands in for third-party servers, not for our own code.
 */
function plainServer(): Promise<{ server: Server; endpoint: Endpoint; bodies: unknown[] }> {
  const bodies: unknown[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/v1/models') return send(200, { object: 'list', data: [{ id: 'plain', object: 'model' }] });
      const body = raw ? JSON.parse(raw) : {};
      bodies.push(body);
      if (req.url === '/v1/chat/completions') return send(200, { choices: [{ index: 0, message: { role: 'assistant', content: `chat:${body.messages.at(-1).content}` }, finish_reason: 'stop' }] });
      if (req.url === '/v1/completions') return send(200, { choices: body.prompt.map((p: string, index: number) => ({ index, text: `list:${p}`, finish_reason: 'stop' })) });
      send(404, { detail: 'Not Found' });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, bodies, endpoint: { host: '127.0.0.1', port: (server.address() as AddressInfo).port, tags: {} } })));
}

describe('servers other than current vLLM', () => {
  const fx = new Fixture();
  let plain: Awaited<ReturnType<typeof plainServer>>;
  before(async () => (plain = await plainServer()));
  after(async () => {
    await fx.close();
    plain.server.closeAllConnections();
    await new Promise((r) => plain.server.close(r));
  });

  it('scatters both ways without usage or max_model_len, saying it falls back to a default context length', async () => {
    const pool = fx.pool([plain.endpoint]);
    const run = scatterGather(pool, ['a', 'b'], {});
    const warnings: string[] = [];
    run.on('warning', (w) => warnings.push(w));
    const batched = await run.done;
    assert.deepEqual(batched.results.map((r) => r.text), ['list:a', 'list:b']);
    assert.equal(batched.summary.completionTokens, null);
    assert.match(warnings.join('\n'), new RegExp(`max_model_len unknown for 127\\.0\\.0\\.1:${plain.endpoint.port}: sizing max_tokens for ${FALLBACK_MAX_MODEL_LEN}`));
    assert.equal((plain.bodies.at(-1) as { max_tokens: number }).max_tokens, 512);
    const individual = await scatterGather(pool, ['c'], { batch: false }).done;
    assert.deepEqual(individual.results.map((r) => [r.text, r.promptTokens]), [['chat:c', null]]);
  });

  it('counts a server without /health as healthy when /v1/models answers', async () => {
    const [report] = await checkHealth(fx.pool([plain.endpoint]));
    assert.deepEqual([report!.status, report!.healthStatus, report!.models.map((m) => m.id)], ['up', null, ['plain']]);
    assert.ok(report!.latencyMs! >= 0);
  });

  it('reports a 503 /health as degraded and a closed port as down', async () => {
    const sick = await fx.sim(1, { healthStatus: 503 });
    const reports = await checkHealth(fx.pool([...sick.endpoints, plain.endpoint]));
    assert.equal(reports[0]!.status, 'degraded');
    assert.equal(reports[0]!.healthStatus, 503);
    assert.equal(reports[1]!.status, 'up', 'a healthy endpoint beside it is unaffected');
    const gone = await fx.sim(1);
    const goneEndpoint = gone.endpoints[0]!;
    await gone.close();
    const [down] = await checkHealth(fx.pool([goneEndpoint]));
    assert.equal(down!.status, 'down');
    assert.match(down!.error!, /ECONNREFUSED/);
  });

  it('writes a round of checks into the pool: what is not up is benched in the status found, no run failure counted, and back in once a check finds it up', async () => {
    const sick = await fx.sim(1, { healthStatus: 503 });
    const pool = fx.pool([...sick.endpoints, plain.endpoint]);
    recordHealth(pool, await checkHealth(pool));
    assert.deepEqual(pool.endpoints.map((s) => s.status), ['degraded', 'up']);
    assert.match(pool.reasonOf(0)!, /^health check: /);
    assert.equal(pool.admits(0, performance.now()), 'no', 'benched: no run sends to it');
    assert.equal(pool.endpoints[0]!.failures, 0, 'a health check is not a failed request of a run');
    sick.servers[0]!.setFaults({ healthStatus: 200 });
    recordHealth(pool, await checkHealth(pool));
    assert.deepEqual([pool.statusOf(0), pool.reasonOf(0), pool.admits(0, performance.now())], ['up', null, 'yes']);
  });
});

describe('endpoint load from /metrics', () => {
  const fx = new Fixture();
  after(() => fx.close());

  it('reads running and waiting sequences while a batch is in flight, and KV-cache usage', async () => {
    // A first token 2 s away: a wide window in which all five are at the server, two running, three waiting.
    const sim = await fx.sim(1, { maxNumSeqs: 2, ttftMs: 2_000 });
    const pool = fx.pool(sim.endpoints);
    const run = scatterGather(pool, ['a', 'b', 'c', 'd', 'e'], { maxTokens: 5 });
    const load = await until(async () => {
      const l = await readLoad(pool, 0);
      return l && l.running + l.waiting === 5 ? l : undefined;
    }, 'the batch at the server');
    assert.deepEqual([load!.running, load!.waiting], [2, 3]);
    assert.ok(load!.kvCacheUsage! > 0);
    await run.done;
    assert.deepEqual(await readLoad(pool, 0), { running: 0, waiting: 0, kvCacheUsage: 0 });
  });

  it('falls back to the older gpu_cache_usage_perc name; request counts of engines add up, their KV-cache usage is the fullest one\'s', () => {
    const dp = ['vllm:num_requests_running{engine="0"} 3', 'vllm:num_requests_running{engine="1"} 2', 'vllm:kv_cache_usage_perc{engine="0"} 0.6', 'vllm:kv_cache_usage_perc{engine="1"} 0.5'].join('\n');
    assert.deepEqual(parseVllmMetrics(dp), { running: 5, waiting: 0, kvCacheUsage: 0.6 }, 'a fraction is never summed over engines');
    const text = ['vllm:num_requests_running{engine="0",model_name="m"} 3', 'vllm:num_requests_running{engine="1",model_name="m"} 2', 'vllm:num_requests_waiting{model_name="m"} 1.0', 'vllm:gpu_cache_usage_perc{model_name="m"} 0.25'].join('\n');
    assert.deepEqual(parseVllmMetrics(text), { running: 5, waiting: 1, kvCacheUsage: 0.25 });
    assert.equal(parseVllmMetrics('# nothing here\n'), null);
  });
});

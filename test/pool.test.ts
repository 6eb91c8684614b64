import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { endpointId, scatterGather, subpool, type EndpointEvent, type PromptResult } from '../src/core/index.ts';
import { closedPort } from './helpers/cli.ts';
import { patience, until } from './helpers/patience.ts';
import { FAST_RETRY, Fixture, prompts } from './helpers/swarm.ts';

const fx = new Fixture();
afterEach(() => fx.close());

const texts = (results: PromptResult[]) => results.map((r) => r.text);
const gen = (stats: { generationRequests: number }[]) => stats.map((s) => s.generationRequests);

describe('batch mode', () => {
  it('sends one /v1/completions list per endpoint, round-robin, results matched to prompts in input order', async () => {
    const sim = await fx.sim(4);
    const pool = fx.pool(sim.endpoints);
    const report = await scatterGather(pool, prompts(10), { maxTokens: 50 }).done;
    assert.equal(report.error, null);
    assert.deepEqual(texts(report.results), prompts(10).map((p) => `completion: ${p}`));
    assert.deepEqual(report.results.map((r) => r.index), [...Array(10).keys()]);
    assert.deepEqual(report.results.map((r) => r.endpoint), prompts(10).map((_, i) => endpointId(sim.endpoints[i % 4]!)));
    assert.deepEqual(gen(sim.servers.map((s) => s.stats())), [1, 1, 1, 1]);
    assert.deepEqual(sim.servers.map((s) => s.stats().promptsReceived), [3, 3, 2, 2]);
    assert.equal(report.summary.generationRequests, 4);
    assert.equal(report.summary.ok, 10);
    assert.ok(report.summary.completionTokens! > 0, 'usage totals are counted');
  });

  it('matches choices by index, not by the order they arrive in', async () => {
    const sim = await fx.sim(2, { shuffleChoices: true });
    const report = await scatterGather(fx.pool(sim.endpoints), prompts(40), { maxTokens: 50 }).done;
    assert.deepEqual(texts(report.results), prompts(40).map((p) => `completion: ${p}`));
  });

  it('splits a group larger than the prompt-list cap into several requests', async () => {
    const sim = await fx.sim(1, { maxPrompts: 4 });
    const report = await scatterGather(fx.pool(sim.endpoints, { maxPromptsPerRequest: 4 }), prompts(10), { maxTokens: 50 }).done;
    assert.equal(report.summary.ok, 10);
    assert.deepEqual(texts(report.results), prompts(10).map((p) => `completion: ${p}`));
    assert.equal(sim.servers[0]!.stats().generationRequests, 3);
  });

  it("learns a server's lower prompt-list cap from its 400 and splits to fit", async () => {
    const sim = await fx.sim(1, { maxPrompts: 4 });
    const pool = fx.pool(sim.endpoints);
    const report = await scatterGather(pool, prompts(10), { maxTokens: 50 }).done;
    assert.deepEqual(texts(report.results), prompts(10).map((p) => `completion: ${p}`));
    assert.deepEqual(sim.servers[0]!.stats().httpRequests, { 'GET /v1/models 200': 1, 'POST /v1/completions 400': 1, 'POST /v1/completions 200': 3 });
    await scatterGather(pool, prompts(10), { maxTokens: 50 }).done;
    assert.equal(sim.servers[0]!.stats().httpRequests['POST /v1/completions 400'], 1, 'the cap is remembered');
  });

  it('holds two lists per endpoint at the server, the rest wait in the client: work in flight follows the swarm, not the input', async () => {
    // Each list stays at its server for a few waves of ~80 ms, so a sampler slowed by a loaded machine still sees lists overlap.
    const sim = await fx.sim(2, { maxNumSeqs: 4, ttftMs: 40, tpotMs: 10 });
    const run = scatterGather(fx.pool(sim.endpoints, { maxPromptsPerRequest: 8 }), prompts(400), { maxTokens: 4 });
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, ...sim.servers.map((s) => s.stats().running + s.stats().waiting))), 1);
    const report = await run.done;
    clearInterval(sampler);
    assert.equal(report.summary.ok, 400);
    assert.deepEqual(report.results.map((r) => r.endpoint), prompts(400).map((_, i) => endpointId(sim.endpoints[i % 2]!)), 'prompt i on endpoint i mod n');
    assert.equal(report.summary.generationRequests, 50);
    assert.ok(most > 8 && most <= 16, `at most two lists of 8 at an endpoint at once (saw ${most})`);
  });

  it('fails only the prompt a server rejects in a list (bisected), with the server message', async () => {
    const sim = await fx.sim(2, { maxModelLen: 300 });
    const list = prompts(6);
    list[2] = 'x'.repeat(2000); // endpoint 0's group: 0, 2, 4
    const report = await scatterGather(fx.pool(sim.endpoints), list, { maxTokens: 20 }).done;
    assert.deepEqual(report.results.map((r) => r.status), ['ok', 'ok', 'failed', 'ok', 'ok', 'ok']);
    assert.match(report.results[2]!.error!, /HTTP 400: .*maximum context length/);
    // Carried by the list, then by the half and the quarter that held it (bisection); a 4xx is never retried.
    assert.equal(report.results[2]!.attempts, 3);
    // The list (3 prompts), its halves (1 and 2), the bad half's halves (1 and 1): 5 requests carrying 8 prompts.
    assert.equal(sim.servers[0]!.stats().generationRequests, 5);
    assert.equal([0, 2, 4].reduce((n, i) => n + report.results[i]!.attempts, 0), 8);
    for (const i of [0, 4]) assert.equal(report.results[i]!.text, `completion: p${i}`);
  });

  it('reads the flat pre-0.10.1 error body as well as the nested one', async () => {
    const flat = await fx.sim(1, { faultRate: 1, faultStatus: 400, errorFormat: 'flat' });
    const nested = await fx.sim(1, { faultRate: 1, faultStatus: 400 });
    for (const sim of [flat, nested]) {
      const [r] = (await scatterGather(fx.pool(sim.endpoints), ['a'], { maxTokens: 5 }).done).results;
      assert.match(r!.error!, /^HTTP 400: \S/);
    }
  });
});

describe('individual mode', () => {
  it('sends one /v1/chat/completions per prompt, round-robin, with per-prompt usage', async () => {
    const sim = await fx.sim(4);
    const report = await scatterGather(fx.pool(sim.endpoints), prompts(10), { batch: false, maxTokens: 50 }).done;
    assert.deepEqual(texts(report.results), prompts(10).map((p) => `completion: ${p}`));
    assert.deepEqual(gen(sim.servers.map((s) => s.stats())), [3, 3, 2, 2]);
    assert.ok(report.results.every((r) => r.promptTokens! > 0 && r.completionTokens! > 0));
    assert.equal(report.summary.generationRequests, 10);
  });

  it('keeps input fields apart from result fields', async () => {
    const sim = await fx.sim(1);
    const report = await scatterGather(fx.pool(sim.endpoints), [{ prompt: 'a', input: { text: 'mine', index: 99, id: 'q1' } }], { batch: false }).done;
    const [r] = report.results;
    assert.equal(r!.text, 'completion: a');
    assert.equal(r!.index, 0);
    assert.deepEqual(r!.input, { text: 'mine', index: 99, id: 'q1' });
  });
});

describe('retries and failover', () => {
  it('retries 503 with backoff up to the policy, then fails with the server message', async () => {
    const sim = await fx.sim(1, { faultRate: 1, faultStatus: 503 });
    // A budget shorter than the cool-down: the endpoint is not waited for after its retries.
    const [r] = (await scatterGather(fx.pool(sim.endpoints, { retry: { ...FAST_RETRY, budgetMs: 1_000 } }), ['a'], { batch: false, maxTokens: 5 }).done).results;
    assert.equal(r!.status, 'failed');
    assert.equal(r!.attempts, 3);
    assert.match(r!.error!, /^HTTP 503/);
  });

  it('a sub-pool whose every endpoint fails says why, with its own endpoints\' reasons', async () => {
    const live = await fx.sim(1);
    const failing = await fx.sim(1, { faultRate: 1, faultStatus: 503 });
    const pool = fx.pool([...live.endpoints, ...failing.endpoints], { retry: { ...FAST_RETRY, budgetMs: 1_000 } });
    const [r] = (await scatterGather(subpool.slice(pool, 1), ['a'], { batch: false, maxTokens: 5 }).done).results;
    assert.equal(r!.status, 'failed');
    assert.match(r!.error!, /^HTTP 503.*, then every endpoint serving \S+ is down or benched \(HTTP 503/);
  });

  it('gets every prompt through a flaky server when retries allow', async () => {
    const sim = await fx.sim(2, { faultRate: 0.5, faultStatus: 502, seed: 7 });
    const pool = fx.pool(sim.endpoints, { retry: { maxAttempts: 12, baseDelayMs: 1, maxDelayMs: 4, budgetMs: 10_000, refusedRetryDelayMs: 1 } });
    const report = await scatterGather(pool, prompts(30), { batch: false, maxTokens: 5 }).done;
    assert.equal(report.summary.ok, 30);
    assert.ok(report.results.some((r) => r.attempts > 1), 'some prompts needed a retry');
    assert.equal(report.summary.generationRequests, report.results.reduce((s, r) => s + r.attempts, 0));
  });

  it('re-routes the prompts of an endpoint that dies (connection reset) to the live ones', async () => {
    const live = await fx.sim(1);
    const dying = await fx.sim(1, { dieAfter: 0 });
    const pool = fx.pool([...live.endpoints, ...dying.endpoints], { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, budgetMs: 1000, refusedRetryDelayMs: 1 } });
    for (const batch of [true, false]) {
      const run = scatterGather(pool, prompts(6), { batch, maxTokens: 20 });
      const events: EndpointEvent[] = [];
      run.on('endpoint', (e) => events.push(e));
      const report = await run.done;
      assert.deepEqual(texts(report.results), prompts(6).map((p) => `completion: ${p}`), `batch=${batch}`);
      assert.ok(report.results.every((r) => r.endpoint === endpointId(live.endpoints[0]!)));
      if (batch) assert.deepEqual(events.filter((e) => e.status === 'down').map((e) => e.endpoint), [endpointId(dying.endpoints[0]!)]);
    }
  });

  it('fails the prompts of a dead endpoint when failover is off, and only those', async () => {
    const live = await fx.sim(1);
    const dying = await fx.sim(1, { dieAfter: 0 });
    const pool = fx.pool([...live.endpoints, ...dying.endpoints], { failover: false });
    const report = await scatterGather(pool, prompts(6), { maxTokens: 20 }).done;
    assert.deepEqual(report.results.map((r) => r.status), ['ok', 'failed', 'ok', 'failed', 'ok', 'failed']);
    assert.ok(report.results.filter((r) => !r.ok).every((r) => r.endpoint === endpointId(dying.endpoints[0]!)));
  });

  it('leaves out an endpoint that refuses connections at once (down, not busy), with a warning naming it', async () => {
    const live = await fx.sim(1);
    const booting = await fx.sim(1, { bootMs: 60_000 });
    const run = scatterGather(fx.pool([...booting.endpoints, ...live.endpoints]), prompts(4), { maxTokens: 20 });
    const warnings: string[] = [];
    run.on('warning', (w) => warnings.push(w));
    const report = await run.done;
    assert.equal(report.summary.ok, 4);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, new RegExp(`${endpointId(booting.endpoints[0]!)} \\(ECONNREFUSED`));
    // Left out at the start, not tried and backed off from: every prompt went to the live one, first time.
    assert.deepEqual(
      report.results.map((r) => [r.endpoint, r.attempts]),
      report.results.map(() => [endpointId(live.endpoints[0]!), 1]),
    );
  });

  it('a start where hundreds of endpoints refuse asks each of them once, by a bare connect: no HTTP client, no retry', async () => {
    const live = await fx.sim(1);
    const refusing = await Promise.all(Array.from({ length: 300 }, () => closedPort()));
    // Every client socket this process opens, by the port it reached or was refused at: counted by
    // Node's own channel, outside the pool, as a recording proxy would.
    const perPort = new Map<number, number>();
    const tally = (port: number | undefined) => port !== undefined && perPort.set(port, (perPort.get(port) ?? 0) + 1);
    const onSocket = (message: unknown) => {
      const { socket } = message as { socket: Socket };
      socket.once('connect', () => tally(socket.remotePort));
      socket.once('error', (err: Error & { port?: number }) => tally(err.port));
    };
    diagnostics.subscribe('net.client.socket', onSocket);
    try {
      const endpoints = [...live.endpoints, ...refusing.map((port) => ({ host: '127.0.0.1', port, tags: {} }))];
      const run = scatterGather(fx.pool(endpoints), prompts(20), { maxTokens: 20 });
      const warnings: string[] = [];
      run.on('warning', (w) => warnings.push(w));
      assert.equal((await run.done).summary.ok, 20);
      assert.ok(warnings.some((w) => /left out 300 endpoint\(s\) that cannot be used: 127\.0\.0\.1:\d+ \(ECONNREFUSED/.test(w)), warnings.join('\n'));
    } finally {
      diagnostics.unsubscribe('net.client.socket', onSocket);
    }
    assert.deepEqual(refusing.map((port) => perPort.get(port) ?? 0), refusing.map(() => 1), 'one connect per refusing endpoint');
    assert.ok((perPort.get(live.endpoints[0]!.port) ?? 0) >= 2, "the live one: the bare connect, then the HTTP client's");
  });

  it('gives every prompt a failed result when no endpoint is usable', async () => {
    const booting = await fx.sim(2, { bootMs: 60_000 });
    const report = await scatterGather(fx.pool(booting.endpoints), prompts(3)).done;
    assert.match(report.error!, /no endpoint is usable/);
    assert.deepEqual(report.results.map((r) => [r.index, r.status]), [[0, 'failed'], [1, 'failed'], [2, 'failed']]);
  });

  it('every endpoint benched (a restart): unsent and failed prompts wait for its cool-down, then go through', async () => {
    const sim = await fx.sim(1);
    const server = sim.servers[0]!;
    const pool = fx.pool(sim.endpoints, { coolDown: { baseMs: 300, maxMs: 300 }, maxPromptsPerRequest: 50 });
    await scatterGather(pool, ['warm'], { maxTokens: 5 }).done; // looked up while up
    server.setFaults({ dead: true });
    const run = scatterGather(pool, prompts(200), { maxTokens: 5 });
    const warnings: string[] = [];
    run.on('warning', (w) => {
      // Back once the run has seen it fail, as a restarted vLLM on the same port.
      if (!warnings.length) server.setFaults({ dead: false });
      warnings.push(w);
    });
    const report = await run.done;
    assert.equal(report.summary.ok, 200, `${report.summary.failed} failed: ${report.results.find((r) => !r.ok)?.error}`);
    assert.ok(warnings.some((w) => /is benched after failing; waiting/.test(w)), warnings.join('\n'));
  });

  it('times out a request that never answers, per its deadline', async () => {
    const sim = await fx.sim(1, { hang: true });
    const pool = fx.pool(sim.endpoints, { timeoutMs: 150, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1000, refusedRetryDelayMs: 1 } });
    const [r] = (await scatterGather(pool, ['a'], { batch: false, maxTokens: 5 }).done).results;
    assert.equal(r!.status, 'failed');
    assert.match(r!.error!, /timed out after 0\.1 s/);
    assert.equal(r!.attempts, 1, 'a timeout is not retried on the same endpoint: another may answer');
  });

  it('requests hung on an endpoint do not hold the run, even when they fill its concurrency: their hedges still leave', { timeout: patience(60_000) }, async () => {
    for (const batch of [false, true]) {
      const live = await fx.sim(1, { ttftMs: 20 });
      const hung = await fx.sim(1, { hang: true });
      // Concurrency 1: the request on the hung endpoint is the whole cap. Before, its hedge waited behind it until it timed out (300 s).
      const pool = fx.pool([...live.endpoints, ...hung.endpoints], { concurrency: 1, hedgeMinMs: 100 });
      const report = await scatterGather(pool, prompts(6), { batch, maxTokens: 5 }).done;
      assert.equal(report.summary.ok, 6, `batch=${batch}: ${report.error ?? ''}`);
      assert.ok(report.results.every((r) => r.endpoint === endpointId(live.endpoints[0]!)), `batch=${batch}`);
      assert.equal(hung.servers[0]!.stats().generationRequests, 1, `batch=${batch}: the hung endpoint got one request, then was benched`);
    }
  });
});

describe('cancel', () => {
  it('keeps every finished result and marks the rest cancelled', async () => {
    const fast = await fx.sim(1);
    const slow = await fx.sim(1, { ttftMs: 60_000 });
    const run = scatterGather(fx.pool([...fast.endpoints, ...slow.endpoints]), prompts(10), { batch: false, maxTokens: 5 });
    let finished = 0;
    run.on('result', (r) => {
      if (r.ok && ++finished === 5) run.cancel();
    });
    const report = await run.done;
    assert.equal(report.cancelled, true);
    assert.deepEqual(report.results.map((r) => r.status), Array.from({ length: 10 }, (_, i) => (i % 2 ? 'cancelled' : 'ok')));
    assert.equal(report.summary.cancelled, 5);
    assert.deepEqual(report.results.map((r) => r.index), [...Array(10).keys()]);
  });
});

describe('one request count: the summary, the rows and the servers agree', () => {
  /** Requests the servers received (a request written just before a cancel may land after the run ends). */
  const received = async (sims: { servers: { stats(): { generationRequests: number } }[] }[], expected: number): Promise<number> => {
    const count = () => sims.flatMap((s) => s.servers).reduce((n, s) => n + s.stats().generationRequests, 0);
    await until(count, 'the servers to count what the rows carried', 5_000, { ready: (n) => n === expected }).catch(() => {});
    return count();
  };

  it('after a cancel with hundreds of requests in flight or queued', async () => {
    const sim = await fx.sim(2, { ttftMs: 40 });
    const run = scatterGather(fx.pool(sim.endpoints, { concurrency: 64 }), prompts(2_000), { batch: false, maxTokens: 5 });
    let finished = 0;
    run.on('result', (r) => {
      if (r.ok && ++finished === 300) run.cancel();
    });
    const report = await run.done;
    assert.equal(report.cancelled, true);
    const carried = report.results.reduce((n, r) => n + r.attempts, 0);
    assert.ok(report.results.some((r) => r.status === 'cancelled' && r.attempts === 1), 'prompts cut off in flight count the request that carried them');
    assert.ok(report.results.some((r) => r.status === 'cancelled' && r.attempts === 0), 'prompts never sent count none');
    assert.equal(report.summary.generationRequests, carried, 'the summary counts what the rows count');
    assert.equal(await received([sim], carried), carried, 'the servers received what the rows count');
  });

  it('after retries and failovers from a failing endpoint, hedges of a hung one, and a refused port', async () => {
    const live = await fx.sim(2, { ttftMs: 20 });
    const hung = await fx.sim(1, { ttftMs: 60_000 });
    const failing = await fx.sim(1, { faultRate: 1, faultStatus: 503 });
    const refused = { host: '127.0.0.1', port: await closedPort(), tags: {} };
    const pool = fx.pool([...live.endpoints, ...hung.endpoints, ...failing.endpoints, refused], { retry: FAST_RETRY, hedgeMinMs: 100, concurrency: 8 });
    const report = await scatterGather(pool, prompts(200), { batch: false, maxTokens: 5 }).done;
    assert.equal(report.summary.ok, 200);
    const carried = report.results.reduce((n, r) => n + r.attempts, 0);
    assert.ok(report.results.some((r) => r.attempts > 1), 'some prompts were carried more than once (a retry, a hedge, a failover)');
    assert.equal(report.summary.generationRequests, carried);
    // A refused connection carried nothing: counted neither by us nor, of course, by any server.
    assert.equal(await received([live, hung, failing], carried), carried);
  });
});

describe('model and endpoint selection', () => {
  it('uses the first served model, leaving out endpoints that serve another one with a warning', async () => {
    const chat = await fx.sim(2, { model: 'chat-model' });
    const embed = await fx.sim(1, { model: 'embed-model' });
    const pool = fx.pool([...chat.endpoints, ...embed.endpoints]);
    const run = scatterGather(pool, prompts(4), { maxTokens: 5 });
    const warnings: string[] = [];
    run.on('warning', (w) => warnings.push(w));
    const report = await run.done;
    assert.equal(report.summary.model, 'chat-model');
    assert.equal(report.summary.ok, 4);
    assert.match(warnings.join('\n'), new RegExp(`do not serve "chat-model": ${endpointId(embed.endpoints[0]!)} \\(embed-model\\)`));
    assert.equal(embed.servers[0]!.stats().generationRequests, 0);
    // the lookup happened once per endpoint, not once per prompt
    await scatterGather(pool, prompts(4), { maxTokens: 5, batch: false }).done;
    for (const s of [...chat.servers, ...embed.servers]) assert.equal(s.stats().httpRequests['GET /v1/models 200'], 1);
  });

  it('names what is served when nobody serves the requested model', async () => {
    const sim = await fx.sim(2, { model: 'm1' });
    const report = await scatterGather(fx.pool(sim.endpoints), prompts(2), { model: 'nope' }).done;
    assert.equal(report.error, 'no endpoint serves model "nope"; served: m1 (2 endpoints)');
    assert.ok(report.results.every((r) => r.status === 'failed' && r.error === report.error));
  });

  it('limits a run to endpoints with the given tags', async () => {
    const sim = await fx.sim(4);
    const tagged = sim.endpoints.map((e, i) => ({ ...e, tags: { role: i < 2 ? 'chat' : 'embed' } }));
    const report = await scatterGather(fx.pool(tagged), prompts(4), { tags: [['role', 'embed']], maxTokens: 5 }).done;
    assert.deepEqual(new Set(report.results.map((r) => r.endpoint)), new Set(tagged.slice(2).map(endpointId)));
    const pool = fx.pool(tagged);
    const kept = await scatterGather(pool, prompts(4), { exclude: [endpointId(tagged[0]!)], maxTokens: 5 }).done;
    assert.ok(kept.results.every((r) => r.ok && r.endpoint !== endpointId(tagged[0]!)), 'an excluded endpoint gets nothing');
    const none = await scatterGather(fx.pool(tagged), prompts(1), { tags: [['role', 'x']] }).done;
    assert.match(none.error!, /no endpoint has tag role=x; tags in the hostfile: role=chat, role=embed/);
  });

  it('sizes max_tokens from max_model_len with Aurora-Swarm\'s formula when not given', async () => {
    const sim = await fx.sim(1, { maxModelLen: 700, reply: 'lorem' });
    const report = await scatterGather(fx.pool(sim.endpoints), ['x'.repeat(400)], { batch: false }).done;
    // min(512, max(128, 700 - 400/4 - 512)) = 128; lorem answers between max/2 and max tokens
    const [r] = report.results;
    assert.ok(r!.ok, r!.error ?? '');
    assert.ok(r!.completionTokens! <= 128 && r!.completionTokens! >= 64, `got ${r!.completionTokens}`);
  });
});

describe('API key', () => {
  it('sends the key as a Bearer token on every request; without it the server refuses, and the run says why', async () => {
    const sim = await fx.sim(2, { apiKey: 'sekret' });
    const ok = await scatterGather(fx.pool(sim.endpoints, { apiKey: 'sekret' }), prompts(4), { maxTokens: 5 }).done;
    assert.equal(ok.summary.ok, 4);
    const denied = await scatterGather(fx.pool(sim.endpoints), prompts(4), { maxTokens: 5 }).done;
    assert.match(denied.error!, /no endpoint is usable: .*HTTP 401: Unauthorized/);
  });
});

describe('reasoning models', () => {
  for (const field of ['reasoning', 'reasoning_content'] as const) {
    it(`keeps ${field} apart from the answer, and reports a cut-off answer as truncated`, async () => {
      const sim = await fx.sim(1, { reasoning: field });
      const pool = fx.pool(sim.endpoints);
      const [full] = (await scatterGather(pool, ['q'], { batch: false, maxTokens: 200 }).done).results;
      assert.equal(full!.text, 'completion: q');
      assert.ok(full!.reasoning && full!.reasoning.length > 0);
      const [cut] = (await scatterGather(pool, ['q'], { batch: false, maxTokens: 10 }).done).results;
      assert.equal(cut!.status, 'failed');
      assert.equal(cut!.finishReason, 'length');
      assert.match(cut!.error!, /^truncated: .*on reasoning/);
      assert.ok(cut!.reasoning);
      const [fallback] = (await scatterGather(pool, ['q'], { batch: false, maxTokens: 10, reasoningFallback: true }).done).results;
      assert.equal(fallback!.status, 'ok');
      assert.equal(fallback!.text, cut!.reasoning);
    });
  }
});

describe('run events', () => {
  it('emits each result once and progress up to the total', async () => {
    const sim = await fx.sim(3);
    const run = scatterGather(fx.pool(sim.endpoints), prompts(25), { maxTokens: 5 });
    const seen = new Set<number>();
    let last = { done: 0, total: 0 };
    run.on('result', (r) => {
      assert.ok(!seen.has(r.index));
      seen.add(r.index);
    });
    run.on('progress', (p) => (last = p));
    await run.done;
    assert.equal(seen.size, 25);
    assert.deepEqual([last.done, last.total], [25, 25]);
  });

  it('handles an empty prompt list', async () => {
    const sim = await fx.sim(1);
    const report = await scatterGather(fx.pool(sim.endpoints), []).done;
    assert.deepEqual([report.results.length, report.error, report.summary.generationRequests], [0, null, 0]);
  });
});

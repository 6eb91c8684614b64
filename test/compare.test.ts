import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { armOrder, compareBatching, gainVerdict, matchedConcurrency, medianRound, requestSpans, type Arm, type ArmRound, type MatchedArm } from '../src/core/run/compare.ts';
import type { Endpoint, PromptResult, RunSummary } from '../src/core/index.ts';
import { Fixture, prompts } from './helpers/swarm.ts';

const fx = new Fixture();
const proxies: Server[] = [];
afterEach(async () => {
  await fx.close();
  await Promise.all(proxies.splice(0).map((p) => new Promise((r) => p.close(r))));
});

interface Captured {
  path: string;
  body: Record<string, unknown>;
}

/**
 * A third-party peer that records every POST body and forwards it to the simulator behind it (the
 * simulator does not expose what it received): proves what went over the wire.
 */
async function capturing(target: Endpoint, seen: Captured[]): Promise<Endpoint> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    if (req.method === 'POST') seen.push({ path: req.url ?? '', body: JSON.parse(raw.toString('utf8')) as Record<string, unknown> });
    const answer = await fetch(`http://${target.host}:${target.port}${req.url}`, {
      method: req.method ?? 'GET',
      headers: { 'content-type': 'application/json' },
      ...(req.method === 'POST' ? { body: raw } : {}),
    });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  proxies.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { host: '127.0.0.1', port: (server.address() as AddressInfo).port, tags: {} };
}

const arms = (rounds: ArmRound[]) => rounds.map((r) => `${r.arm[0]}${r.round}`);

describe('compareBatching', () => {
  it('alternates the arms ABBA… over the rounds, neither always first', async () => {
    assert.deepEqual([0, 1, 2, 3].flatMap(armOrder), ['batched', 'individual', 'individual', 'batched', 'batched', 'individual', 'individual', 'batched']);
    const sim = await fx.sim(2);
    const started: string[] = [];
    const comparison = await compareBatching(fx.pool(sim.endpoints), prompts(6), {
      rounds: 4,
      maxTokens: 8,
      onArm: (run, arm, round) => {
        assert.equal(run.progress.done, 0, 'handed over before it starts');
        started.push(`${arm[0]}${round}`);
      },
    }).done;
    assert.deepEqual(started, ['b0', 'i0', 'i1', 'b1', 'b2', 'i2', 'i3', 'b3']);
    assert.deepEqual(arms(comparison.rounds), started);
    assert.equal(comparison.cancelled, false);
    assert.equal(comparison.error, null);
    assert.match(comparison.templatePaths.batched, /\/v1\/completions/);
    assert.match(comparison.templatePaths.individual, /\/v1\/chat\/completions/);
  });

  it('sends one request per endpoint when batched and one per prompt when individual, with a timeline and latencies of each', async () => {
    const sim = await fx.sim(3);
    const list = prompts(10);
    const comparison = await compareBatching(fx.pool(sim.endpoints), list, { rounds: 2, maxTokens: 8 }).done;
    assert.equal(comparison.rounds.length, 4);
    for (const r of comparison.rounds) {
      const expected = r.arm === 'batched' ? 3 : 10;
      const generated = r.arm === 'batched' ? r.summary.requestsByPath['/v1/completions'] : r.summary.generationRequests;
      assert.equal(generated, expected, `${r.arm} round ${r.round}`);
      assert.equal(r.summary.mode, r.arm);
      assert.equal(r.summary.ok, 10);
      assert.equal(r.requests.length, expected);
      assert.equal(r.requests.reduce((s, q) => s + q.prompts, 0), 10);
      assert.deepEqual(new Set(r.requests.map((q) => q.endpoint)), new Set(sim.endpoints.map((e) => `${e.host}:${e.port}`)));
      assert.ok(r.requests.every((q) => q.sentMs >= 0 && q.doneMs >= q.sentMs));
      if (r.arm === 'batched') assert.deepEqual(r.requests.map((q) => q.prompts).sort(), [3, 3, 4]);
      assert.equal(r.latenciesMs.length, 10);
      assert.ok(r.latenciesMs.every((ms) => ms >= 0));
    }
    const sent = sim.servers.reduce((s, server) => s + server.stats().generationRequests, 0);
    assert.equal(sent, 2 * (3 + 10));
  });

  it("matches work in flight: the individual arm fills the servers' slots (endpoints × max-num-seqs), not the pool's cap, and the verdict says so", async () => {
    // Two servers of 4 slots each; every sequence holds its slot 300 ms, so requests in flight overlap.
    const sim = await fx.sim(2, { maxNumSeqs: 4, ttftMs: 300 });
    const pool = fx.pool(sim.endpoints, { concurrency: 2, maxNumSeqs: 4 });
    const running = async (run: { done: Promise<unknown> }): Promise<number> => {
      let most = 0;
      let over = false;
      void run.done.then(() => (over = true));
      while (!over) {
        most = Math.max(most, sim.servers.reduce((s, server) => s + server.stats().running, 0));
        await new Promise((r) => setTimeout(r, 5));
      }
      return most;
    };
    for (const setting of ['match', 'pool'] as const) {
      const seen: Promise<number>[] = [];
      const comparison = await compareBatching(pool, prompts(20), { rounds: 1, maxTokens: 1, individualConcurrency: setting, onArm: (run, arm) => void (arm === 'individual' && seen.push(running(run))) }).done;
      assert.equal(comparison.serverSlots, 8);
      const individual = medianRound(comparison.rounds, 'individual') as MatchedArm;
      const batched = medianRound(comparison.rounds, 'batched') as MatchedArm;
      const serverPeak = await seen[0]!;
      assert.equal(batched.inFlight.concurrency, 2, 'the batched arm runs on the pool as given');
      assert.equal(batched.inFlight.peakPrompts, 20);
      assert.equal(batched.inFlight.peakRequests, 2);
      assert.deepEqual(individual.summary.requestsByPath, { '/v1/chat/completions': 20 });
      assert.ok(individual.cpuMs > 0 && batched.cpuMs > 0);
      const verdict = gainVerdict(comparison, batched, individual);
      if (setting === 'match') {
        assert.equal(comparison.individualConcurrency, 8);
        assert.equal(individual.inFlight.concurrency, 8);
        assert.ok(individual.inFlight.peakPrompts > 2 && individual.inFlight.peakPrompts <= 8, String(individual.inFlight.peakPrompts));
        assert.ok(serverPeak > 2 && serverPeak <= 8, `the servers ran ${serverPeak} at once`);
        assert.match(verdict, /^matched: /);
      } else {
        assert.equal(individual.inFlight.concurrency, 2);
        assert.ok(individual.inFlight.peakPrompts <= 2 && serverPeak <= 2);
        assert.match(verdict, /^not matched: .*idle server slots/);
      }
    }
    assert.equal(matchedConcurrency('match', 100_000, 1_000 * 256, 512), 10_000, 'a socket per request: no more than 10,000 open');
    assert.equal(matchedConcurrency('match', 100_000, 1_000 * 8, 512), 8_000);
    assert.throws(() => matchedConcurrency(0, 10, 10, 10), /individualConcurrency/);
  });

  it("salts vLLM's prefix cache per arm and round, and only when asked", async () => {
    const sim = await fx.sim(2);
    const seen: Captured[] = [];
    const endpoints = await Promise.all(sim.endpoints.map((e) => capturing(e, seen)));
    await compareBatching(fx.pool(endpoints), prompts(4), { rounds: 2, maxTokens: 8, extra: { seed_note: 'kept' } }).done;
    const generation = seen.filter((c) => c.path === '/v1/completions' || c.path === '/v1/chat/completions');
    assert.equal(generation.length, 2 * (2 + 4));
    assert.ok(generation.every((c) => c.body.seed_note === 'kept'), 'other extra fields ride along');
    const salts = new Map<string, Set<string>>();
    for (const c of generation) {
      const salt = c.body.cache_salt;
      assert.equal(typeof salt, 'string', `${c.path} carries cache_salt`);
      const key = c.path === '/v1/completions' ? 'batched' : 'individual';
      if (!salts.has(salt as string)) salts.set(salt as string, new Set());
      salts.get(salt as string)!.add(key);
    }
    assert.equal(salts.size, 4, 'one salt per arm and round');
    assert.ok([...salts.values()].every((s) => s.size === 1), 'an arm never shares its salt with the other');
    assert.deepEqual([...salts.keys()].map((s) => s.replace(/^swarm-lab-[0-9a-f]{8}-/, '')).sort(), ['r0-batched', 'r0-individual', 'r1-batched', 'r1-individual']);

    seen.length = 0;
    await compareBatching(fx.pool(endpoints), prompts(4), { rounds: 1, maxTokens: 8, cacheSalt: false }).done;
    assert.ok(seen.length > 0 && seen.every((c) => !('cache_salt' in c.body)));
  });

  it('cancel stops the arm running now: its unfinished prompts are cancelled and no other arm starts', async () => {
    const fast = await fx.sim(1);
    const stuck = await fx.sim(1, { hang: true });
    const started: Arm[] = [];
    let cancelledArm: readonly PromptResult[] = [];
    const handle = compareBatching(fx.pool([...fast.endpoints, ...stuck.endpoints]), prompts(6), {
      rounds: 3,
      maxTokens: 4,
      onArm: (run, arm) => {
        started.push(arm);
        run.on('result', () => handle.cancel()); // the fast endpoint's batch is in: stop
      },
      onArmDone: (_, results) => {
        cancelledArm = results;
      },
    });
    const comparison = await handle.done;
    assert.equal(comparison.cancelled, true);
    assert.equal(comparison.error, 'cancelled');
    assert.deepEqual(started, ['batched']);
    assert.deepEqual(comparison.rounds, []);
    assert.deepEqual(cancelledArm.map((r) => r.status), ['ok', 'cancelled', 'ok', 'cancelled', 'ok', 'cancelled']);
    assert.equal(fast.servers[0]!.stats().httpRequests['POST /v1/chat/completions 200'], undefined, 'the individual arm never ran');
  });

  it('cancel between arms keeps the finished rounds and sends nothing more', async () => {
    const sim = await fx.sim(2);
    const started: string[] = [];
    const handle = compareBatching(fx.pool(sim.endpoints), prompts(8), {
      rounds: 3,
      maxTokens: 4,
      onArm: (_, arm, round) => {
        started.push(`${arm[0]}${round}`);
        if (started.length === 2) handle.cancel();
      },
    });
    const comparison = await handle.done;
    assert.equal(comparison.cancelled, true);
    assert.deepEqual(started, ['b0', 'i0']);
    assert.deepEqual(arms(comparison.rounds), ['b0']);
    assert.deepEqual(sim.servers.map((s) => s.stats().generationRequests), [1, 1], 'only the batched arm reached the servers');
  });

  it('cancel before the first arm starts runs nothing', async () => {
    const sim = await fx.sim(1);
    const handle = compareBatching(fx.pool(sim.endpoints), prompts(3), { maxTokens: 4, onArm: () => handle.cancel() });
    const comparison = await handle.done;
    assert.equal(comparison.cancelled, true);
    assert.deepEqual(comparison.rounds, []);
    assert.equal(sim.servers[0]!.stats().generationRequests, 0);
  });

  it('stops at an arm that cannot run and says why', async () => {
    const sim = await fx.sim(1);
    const comparison = await compareBatching(fx.pool(sim.endpoints), prompts(2), { model: 'no-such-model', maxTokens: 4 }).done;
    assert.equal(comparison.cancelled, false);
    assert.match(comparison.error ?? '', /no-such-model/);
    assert.equal(comparison.rounds.length, 1, 'the failed arm is reported once');
  });

  it('rejects a round count that is not a whole number of at least 1', () => {
    assert.throws(() => compareBatching(fx.pool([]), ['a'], { rounds: 0 }), /rounds/);
    assert.throws(() => compareBatching(fx.pool([]), ['a'], { rounds: 1.5 }), /rounds/);
  });
});

describe('requestSpans and medianRound', () => {
  const result = (index: number, endpoint: string | null, sentMs: number | null, doneMs: number): PromptResult => ({
    index,
    prompt: `p${index}`,
    status: sentMs === null ? 'failed' : 'ok',
    ok: sentMs !== null,
    text: '',
    reasoning: null,
    error: null,
    endpoint,
    finishReason: null,
    promptTokens: null,
    completionTokens: null,
    attempts: 1,
    timings: { queuedMs: 0, sentMs, firstByteMs: null, firstTokenMs: null, doneMs },
    input: {},
  });

  it('groups a batched arm by endpoint and send time, and gives an individual arm one request per prompt', () => {
    const results = [result(0, 'a:1', 1, 10), result(1, 'b:1', 1, 12), result(2, 'a:1', 1, 11), result(3, 'a:1', 5, 9), result(4, null, null, 3)];
    assert.deepEqual(requestSpans(results, 'batched'), [
      { endpoint: 'a:1', sentMs: 1, doneMs: 11, prompts: 2 },
      { endpoint: 'b:1', sentMs: 1, doneMs: 12, prompts: 1 },
      { endpoint: 'a:1', sentMs: 5, doneMs: 9, prompts: 1 },
    ]);
    assert.equal(requestSpans(results, 'individual').length, 4, 'unsent prompts are no request');
    assert.ok(requestSpans(results, 'individual').every((s) => s.prompts === 1));
  });

  it('picks the round of median wall time per arm (the lower of an even count)', () => {
    const round = (arm: Arm, r: number, wallMs: number): ArmRound => ({ arm, round: r, summary: { wallMs } as RunSummary, requests: [], latenciesMs: [] });
    const rounds = [round('batched', 0, 30), round('individual', 0, 5), round('batched', 1, 10), round('individual', 1, 7), round('batched', 2, 20)];
    assert.equal(medianRound(rounds, 'batched')!.round, 2);
    assert.equal(medianRound(rounds, 'individual')!.round, 0);
    assert.equal(medianRound([], 'batched'), undefined);
  });
});

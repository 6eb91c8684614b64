import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { scatterGather, type PoolOptions, type PromptResult, type ScatterOptions } from '../src/core/index.ts';
import { FAST_RETRY, Fixture, prompts } from './helpers/swarm.ts';
import { killAll, startSim, tempDir, waitFor } from './helpers/cli.ts';

/** Short clocks so a misbehaving swarm costs the suite seconds, not minutes. */
const CHAOS: Partial<PoolOptions> = { retry: FAST_RETRY, coolDown: { baseMs: 100, maxMs: 1_000 }, stallTimeoutMs: 1_000, hedgeMinMs: 200, timeoutMs: 30_000 };
/** Echo answers past EOS repeat `completion: <prompt>`: 20 tokens name their prompt ten times. */
const TOKENS = 20;
const GEN = { maxTokens: TOKENS, extra: { ignore_eos: true } };
const expected = (prompt: string) => Array.from({ length: TOKENS / 2 }, () => `completion: ${prompt}`).join(' ');

/** One result per prompt, in order, each carrying its own prompt; every answer is its own prompt's. */
function checkRows(results: readonly PromptResult[], list: readonly string[]): number {
  assert.equal(results.length, list.length);
  let ok = 0;
  results.forEach((r, i) => {
    assert.equal(r.index, i);
    assert.equal(r.prompt, list[i]);
    if (r.ok) {
      ok++;
      assert.equal(r.text, expected(list[i]!), `prompt ${i} got another prompt's answer`);
    }
  });
  return ok;
}

const fx = new Fixture();
afterEach(() => fx.close());
after(() => killAll());

describe('chaos: 10,000 prompts over 20 endpoints while several die, hang, stall, slow down, reset or answer 503', () => {
  const modes: Array<[string, ScatterOptions]> = [
    ['batched', { batch: true }],
    ['individual', { batch: false }],
    ['batched, streamed', { batch: true, stream: true }],
    ['individual, streamed', { batch: false, stream: true }],
  ];
  for (const [label, mode] of modes) {
    it(label, async () => {
      const sim = await fx.sim(20, { ttftMs: 5, tpotMs: 2, maxNumSeqs: 64 });
      const [dies, hangs, fails, slow, stalls, drops] = sim.servers;
      hangs!.setFaults({ hang: true });
      fails!.setFaults({ faultRate: 1, faultStatus: 503 });
      slow!.setFaults({ slowFactor: 4 });
      if (mode.stream) {
        stalls!.setFaults({ stallAfterChunks: 40 });
        drops!.setFaults({ dropAfterChunks: 30 });
      } else {
        stalls!.setFaults({ dieAfter: 1 });
        drops!.setFaults({ faultRate: 0.5, faultStatus: 500 });
      }
      const list = prompts(10_000);
      const run = scatterGather(fx.pool(sim.endpoints, CHAOS), list, { ...mode, ...GEN });
      const killer = setTimeout(() => dies!.setFaults({ dead: true }), 150);
      const warnings: string[] = [];
      run.on('warning', (w) => warnings.push(w));
      const report = await run.done;
      clearTimeout(killer);
      const ok = checkRows(report.results, list);
      assert.ok(ok >= 9_990, `${ok} of 10,000 ok; failures: ${[...new Set(report.results.filter((r) => !r.ok).map((r) => r.error))].join(' | ')}`);
      const answeredBy = new Set(report.results.filter((r) => r.ok).map((r) => r.endpoint));
      assert.ok(!answeredBy.has(`${hangs!.endpoint.host}:${hangs!.endpoint.port}`), 'the hung endpoint answered nothing');
      assert.ok(!answeredBy.has(`${fails!.endpoint.host}:${fails!.endpoint.port}`), 'the 503 endpoint answered nothing');
      assert.ok(warnings.length > 0, 'the run said where prompts were moved');
      if (mode.stream) assert.ok(report.summary.ttft && report.summary.itl, 'streamed runs measure TTFT and ITL');
    });
  }
});

describe('real servers stopped and killed mid-run', () => {
  for (const batch of [true, false]) {
    it(`${batch ? 'batched' : 'individual'}: one endpoint SIGSTOPped and one kill -9ed; every prompt answered`, async () => {
      const { dir, cleanup } = await tempDir();
      try {
        const sims = await Promise.all([0, 1, 2, 3].map((k) => startSim(dir, `h${k}`, 1, ['--ttft-ms', '5', '--tpot-ms', '2', '--max-num-seqs', '32'])));
        const endpoints = sims.map((s) => ({ host: '127.0.0.1', port: Number(s.endpoints[0]!.split(':')[1]), tags: {} }));
        const list = prompts(2_000);
        const run = scatterGather(fx.pool(endpoints, CHAOS), list, { batch, ...GEN });
        let seen = 0;
        const [stopped, killed] = [sims[0]!, sims[1]!];
        const faults = new Promise<void>((resolve) => {
          // Faults strike once the run is under way: in flight on both endpoints.
          const timer = setTimeout(() => {
            stopped.child.kill('SIGSTOP');
            killed.child.kill('SIGKILL');
            resolve();
          }, 120);
          run.on('result', () => void (++seen === list.length && clearTimeout(timer)));
        });
        const report = await run.done;
        await Promise.race([faults, Promise.resolve()]);
        stopped.child.kill('SIGKILL');
        assert.equal(checkRows(report.results, list), list.length, [...new Set(report.results.filter((r) => !r.ok).map((r) => r.error))].join(' | '));
      } finally {
        await cleanup();
      }
    });
  }
});

describe('exact choices', () => {
  it("a server that ignores n: no prompt is credited another prompt's answer", async () => {
    const { ignoringN } = await import('./helpers/odd-servers.ts');
    const server = await ignoringN();
    try {
      for (const batch of [true, false]) {
        const report = await scatterGather(fx.pool([server.endpoint]), prompts(6), { batch, n: 2, maxTokens: 5 }).done;
        for (const r of report.results) {
          assert.equal(r.status, 'failed');
          assert.match(r.error!, /server returned 1 choice per prompt for n=2: it may not support n/);
          assert.equal(r.texts, undefined);
        }
      }
      const fine = await scatterGather(fx.pool([server.endpoint]), prompts(6), { maxTokens: 5 }).done;
      assert.deepEqual(fine.results.map((r) => r.text), prompts(6).map((p) => `echo ${p}`));
    } finally {
      await server.close();
    }
  });
});

describe('hedging', () => {
  it('an unstreamed answer whose headers came is not hedged, and its endpoint not benched, however slow its body', async () => {
    const { slowBody } = await import('./helpers/odd-servers.ts');
    const slow = await slowBody(1_000);
    const fast = await slowBody(0);
    try {
      const pool = fx.pool([slow.endpoint, fast.endpoint], { ...CHAOS, hedgeMinMs: 100 });
      const run = scatterGather(pool, prompts(20), { maxTokens: 5 });
      const warnings: string[] = [];
      run.on('warning', (w) => warnings.push(w));
      const report = await run.done;
      assert.deepEqual(report.results.map((r) => r.text), prompts(20).map((p) => `echo ${p}`));
      const id = `${slow.endpoint.host}:${slow.endpoint.port}`;
      assert.equal(report.results.filter((r) => r.endpoint === id).length, 10, 'the slow body answered its own half');
      assert.deepEqual(warnings, []);
      assert.equal(pool.endpoints.find((s) => s.id === id)?.status, 'up', 'not benched');
    } finally {
      await Promise.all([slow.close(), fast.close()]);
    }
  });
});

describe('batch surgery', () => {
  it('one over-long prompt in a list of 40 fails alone, with the server message, in O(log n) extra requests', async () => {
    const sim = await fx.sim(1, { maxModelLen: 400 });
    const list = prompts(40);
    list[17] = 'x'.repeat(4000);
    const report = await scatterGather(fx.pool(sim.endpoints, CHAOS), list, { maxTokens: 16 }).done;
    assert.deepEqual(report.results.filter((r) => !r.ok).map((r) => r.index), [17]);
    assert.match(report.results[17]!.error!, /^HTTP 400: .*context length/i);
    for (const r of report.results.filter((x) => x.ok)) assert.equal(r.text, `completion: ${r.prompt}`);
    assert.ok(report.summary.generationRequests <= 1 + 2 * Math.ceil(Math.log2(40)), `${report.summary.generationRequests} requests`);
  });

  it('a list above the server cap is split to fit and the cap is kept for the next run', async () => {
    const sim = await fx.sim(1, { maxPrompts: 7 });
    const pool = fx.pool(sim.endpoints, CHAOS);
    const first = await scatterGather(pool, prompts(30), { maxTokens: 8 }).done;
    assert.equal(first.summary.ok, 30);
    const second = await scatterGather(pool, prompts(30), { maxTokens: 8 }).done;
    assert.equal(second.summary.ok, 30);
    assert.equal(second.summary.generationRequests, Math.ceil(30 / 7), 'the learned cap splits up front');
  });
});

describe('cancel during a streamed batch', () => {
  it('keeps every finished choice, cancels the rest, and leaves no sequence running on the servers', async () => {
    const sim = await fx.sim(2, { ttftMs: 5, tpotMs: 3, maxNumSeqs: 16 });
    const pool = fx.pool(sim.endpoints, CHAOS);
    for (const delay of [0, 30, 90, 200, 400]) {
      const list = prompts(200, `c${delay}-`);
      const run = scatterGather(pool, list, { batch: true, stream: true, ...GEN });
      let finished = 0;
      run.on('result', (r) => void (r.ok && finished++));
      setTimeout(() => run.cancel(), delay);
      const report = await run.done;
      checkRows(report.results, list);
      assert.equal(report.summary.ok, finished, 'every answer that finished before the cancel is kept');
      assert.equal(report.summary.ok + report.summary.cancelled, list.length);
      await waitFor(() => (sim.servers.every((s) => s.stats().running === 0) ? true : undefined), 5_000, 'the servers to free every slot');
    }
  });
});

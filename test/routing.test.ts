import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { prefixSlot, scatterGather, type RouteStrategy } from '../src/core/index.ts';
import { Fixture, prompts } from './helpers/swarm.ts';

const fx = new Fixture();
afterEach(() => fx.close());

/** Prompts each endpoint answered, in hostfile order. */
function perEndpoint(results: ReadonlyArray<{ endpoint: string | null }>, ids: readonly string[]): number[] {
  return ids.map((id) => results.filter((r) => r.endpoint === id).length);
}

describe('routing', () => {
  for (const batch of [false, true]) {
    for (const route of ['least-requests', 'least-load'] as RouteStrategy[]) {
      it(`${batch ? 'batched' : 'individual'}, ${route}: a 4× slower endpoint gets fewer prompts than round-robin gives it; every answer in order`, async () => {
        // Paces long enough that the servers' own timers, not this process's CPU (the client and the
        // servers share it), set who is slow: at 2 ms a token a machine at load 20 made all four alike.
        const sim = await fx.sim(4, { ttftMs: 20, tpotMs: 20, maxNumSeqs: 8 });
        sim.servers[0]!.setFaults({ slowFactor: 4 });
        const ids = sim.endpoints.map((e) => `${e.host}:${e.port}`);
        const list = prompts(400);
        const pool = fx.pool(sim.endpoints, { route, hedge: false, concurrency: 32 });
        const report = await scatterGather(pool, list, { batch, maxTokens: 10, extra: { ignore_eos: true } }).done;
        assert.equal(report.summary.ok, 400);
        report.results.forEach((r, i) => assert.equal(r.prompt, list[i]));
        const counts = perEndpoint(report.results, ids);
        assert.ok(counts[0]! < 100, `the slow endpoint took ${counts[0]} of 400 (round-robin: 100): ${counts.join(' ')}`);
      });
    }
  }

  it('streamed batches: a list whose tokens come 4× slower is hedged once the others are idle, with no time floor', async () => {
    // 60 ms a token for the same reason as above (at 10 ms no stream lagged under load 20).
    const sim = await fx.sim(4, { ttftMs: 5, tpotMs: 60, maxNumSeqs: 256 });
    sim.servers[0]!.setFaults({ slowFactor: 4 });
    const ids = sim.endpoints.map((e) => `${e.host}:${e.port}`);
    const list = prompts(200);
    // Overdue hedging would wait a minute: only the stream's pace can move its prompts.
    const pool = fx.pool(sim.endpoints, { hedgeMinMs: 60_000 });
    const run = scatterGather(pool, list, { batch: true, stream: true, maxTokens: 40, extra: { ignore_eos: true } });
    const warnings: string[] = [];
    run.on('warning', (w) => warnings.push(w));
    const report = await run.done;
    assert.equal(report.summary.ok, 200);
    report.results.forEach((r, i) => assert.equal(r.prompt, list[i]));
    assert.ok(warnings.some((w) => w.startsWith(`${ids[0]}: its tokens come`)), warnings.join('\n'));
    const counts = perEndpoint(report.results, ids);
    assert.ok(counts[0]! < 50, `the slow endpoint answered ${counts[0]} of its 50 before the copies: ${counts.join(' ')}`);
    // Its list lost to the copies: slow, not failed (a loss the run still hears is counted as outrun: "answered elsewhere first").
    assert.equal(pool.endpoints[0]!.failures, 0);
  });

  it('prefix-aware: prompts sharing a prefix meet on one endpoint, the first prefix on its hashed one, the same in every run', async () => {
    const sim = await fx.sim(4);
    const ids = sim.endpoints.map((e) => `${e.host}:${e.port}`);
    const list = Array.from({ length: 40 }, (_, i) => `${i % 2 ? 'Summarize the report' : 'Translate the text'} #${Math.floor(i / 2)}`.padStart(300, i % 2 ? 'A' : 'B'));
    // One at a time, so no endpoint is ever overloaded (then a prompt would go to the least loaded one).
    const pool = fx.pool(sim.endpoints, { route: 'prefix-aware', hedge: false, concurrency: 1 });
    const placed = async () => {
      const report = await scatterGather(pool, list, { batch: false, maxTokens: 5 }).done;
      assert.equal(report.summary.ok, 40);
      const byPrefix = new Map<string, Set<string | null>>();
      for (const r of report.results) byPrefix.set(r.prompt[0]!, (byPrefix.get(r.prompt[0]!) ?? new Set()).add(r.endpoint));
      assert.deepEqual([...byPrefix.values()].map((s) => s.size), [1, 1], 'each prefix on one endpoint');
      return [...byPrefix.entries()].map(([k, s]) => [k, [...s][0]]);
    };
    const first = await placed();
    assert.equal(first[0]![1], ids[prefixSlot(list[0]!, 4)], 'the first prefix on its hashed endpoint');
    assert.notEqual(first[0]![1], first[1]![1], 'two prefixes over four endpoints: two endpoints');
    assert.deepEqual(await placed(), first, 'the same endpoints in the next run');
  });
});

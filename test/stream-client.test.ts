import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { scatterGather } from '../src/core/index.ts';
import { Fixture, prompts } from './helpers/swarm.ts';

const fx = new Fixture();
afterEach(() => fx.close());

describe('streamed requests', () => {
  for (const batch of [true, false]) {
    it(`${batch ? 'batched' : 'individual'}: the same answers as unstreamed, every token counted, TTFT/TPOT/ITL measured`, async () => {
      const sim = await fx.sim(2, { ttftMs: 30, tpotMs: 5 });
      const pool = fx.pool(sim.endpoints);
      const list = prompts(40);
      const gen = { batch, maxTokens: 12, extra: { ignore_eos: true } };
      const plain = await scatterGather(pool, list, gen).done;
      const streamed = await scatterGather(pool, list, { ...gen, stream: true }).done;
      assert.deepEqual(streamed.results.map((r) => r.text), plain.results.map((r) => r.text));
      for (const r of streamed.results) {
        assert.equal(r.completionTokens, 12);
        assert.ok(r.timings.firstTokenMs! > r.timings.sentMs! && r.timings.firstTokenMs! < r.timings.doneMs, 'first token between send and done');
      }
      const s = streamed.summary;
      assert.equal(s.streamed, true);
      assert.equal(s.completionTokens, 40 * 12, "the servers' usage of every request, the last one's included");
      assert.ok(s.ttft!.medianMs >= 25, `TTFT median ${s.ttft!.medianMs} ms follows the server's 30 ms`);
      // A server never sends a token before its TTFT timer, so that bound holds under any load; token gaps do not:
      // a late engine tick catches up in a burst. So TPOT is checked against each request's own clock, ITL for shape.
      const tpots = streamed.results.map((r) => (r.timings.doneMs - r.timings.firstTokenMs!) / (r.completionTokens! - 1));
      assert.ok(s.tpot!.medianMs >= Math.min(...tpots) && s.tpot!.medianMs <= Math.max(...tpots), `TPOT median ${s.tpot!.medianMs} ms within the requests' own`);
      assert.ok(s.itl!.medianMs >= 0 && s.itl!.medianMs <= s.itl!.p99Ms && s.itl!.meanMs > 0, 'ITL measured from the gaps between tokens');
      assert.equal(plain.summary.ttft, null, 'unstreamed runs measure no TTFT');
    });
  }
});

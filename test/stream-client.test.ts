import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { scatterGather } from '../src/core/index.ts';
import { StreamAnswers } from '../src/core/requests/stream-answers.ts';
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
        // On a loaded machine the whole stream can arrive in one read: the first token and the end then share a moment.
        assert.ok(r.timings.firstTokenMs! > r.timings.sentMs! && r.timings.firstTokenMs! <= r.timings.doneMs, 'first token between send and done');
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

  it('ITL: deltas of a choice read together share the gap since its read before (none are 0); those read with the first token have none', () => {
    const gaps: number[] = [];
    const answers = new StreamAnswers(2, 1, { onAnswer: () => {}, onGap: (ms) => gaps.push(ms) });
    const delta = (index: number, text: string, finish?: string) => ({ choices: [{ index, text, ...(finish ? { finish_reason: finish } : {}) }] });
    // Read at 100 ms: choice 0's first two tokens (TTFT's read), choice 1's first.
    for (const e of [delta(0, 'a'), delta(0, 'b'), delta(1, 'x')]) answers.add(e, 100);
    // Read at 130: choice 0's next three tokens, behind the client's 30 ms pause.
    for (const e of [delta(0, 'c'), delta(0, 'd'), delta(0, 'e')]) answers.add(e, 130);
    // Read at 140: one token each; then choice 0 ends in the same read as its last token.
    answers.add(delta(1, 'y'), 140);
    answers.add(delta(0, 'f'), 140);
    answers.add(delta(0, '', 'stop'), 140);
    answers.add(delta(1, 'z', 'stop'), 150);
    answers.end();
    assert.deepEqual(gaps, [10, 10, 10, 10, 40, 10], 'choice 0: 30 ms over its 3 deltas read at 130, then 10; choice 1: 40 ms, then 10');
  });

  it('ITL of a streamed batch whose client reads behind the server: its median near TPOT\'s, never 0', async () => {
    // The simulator and the client share one event loop here, as the extension host's local simulator does: reads come in bursts.
    const sim = await fx.sim(2, { ttftMs: 5, tpotMs: 4 });
    const pool = fx.pool(sim.endpoints);
    const s = (await scatterGather(pool, prompts(400), { maxTokens: 32, stream: true, extra: { ignore_eos: true } }).done).summary;
    assert.ok(s.itl!.medianMs > 1 && s.itl!.medianMs >= s.tpot!.medianMs / 3 && s.itl!.medianMs <= s.tpot!.medianMs * 3, `ITL p50 ${s.itl!.medianMs} ms beside TPOT p50 ${s.tpot!.medianMs} ms`);
  });
});

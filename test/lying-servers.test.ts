/**
 * A prompt is credited only with its own answer and fails only for its own fault, whatever a server
 * (or the proxy in front of it) does to a list: every answer a lying server gives is `ans:<prompt>`.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { scatterGather, SwarmPool } from '../src/core/index.ts';
import { BODY_CAP, BUSY_MS, lyingServer, type Lie, type LyingServer } from './helpers/lying-server.ts';
import { withServer } from './helpers/sim-server.ts';
import { FAST_RETRY } from './helpers/swarm.ts';
import { patience } from './helpers/patience.ts';

const prompts = (n: number) => Array.from({ length: n }, (_, i) => `prompt ${i}`);
const servers: LyingServer[] = [];
after(() => Promise.all(servers.map((s) => s.close())));

async function liar(lie: Lie): Promise<LyingServer> {
  const s = await lyingServer(lie);
  servers.push(s);
  return s;
}

/** Each row answered with its own prompt, or failed. */
function ownAnswers(results: ReadonlyArray<{ prompt: string; ok: boolean; text: string }>): void {
  for (const r of results) if (r.ok) assert.equal(r.text, `ans:${r.prompt}`);
}

describe('lying servers', { timeout: patience(60_000) }, () => {
  for (const lie of ['error-200', 'truncated', 'redirect'] as const) {
    it(`${lie}: the list goes to an honest endpoint, every prompt answered with its own answer`, async () => {
      const [bad, good] = [await liar(lie), await liar('ok')];
      const pool = new SwarmPool([bad.endpoint, good.endpoint], { retry: FAST_RETRY });
      try {
        const run = scatterGather(pool, prompts(40), { maxTokens: 8 });
        const warnings: string[] = [];
        run.on('warning', (w) => warnings.push(w));
        const { results } = await run.done;
        assert.deepEqual(results.map((r) => r.status), Array(40).fill('ok'));
        ownAnswers(results);
        if (lie === 'error-200') assert.ok(warnings.some((w) => w.includes('upstream model crashed')), warnings.join('\n'));
      } finally {
        await pool.close();
      }
    });
  }

  it('a body that trickles after its headers meets the deadline, and the list is answered elsewhere', async () => {
    const [bad, good] = [await liar('trickle'), await liar('ok')];
    const pool = new SwarmPool([bad.endpoint, good.endpoint], { retry: FAST_RETRY, timeoutMs: 1_000, timeoutPerSequenceMs: 1_000, hedge: false });
    try {
      const { results } = await scatterGather(pool, prompts(20), { maxTokens: 8 }).done;
      assert.deepEqual(results.map((r) => r.status), Array(20).fill('ok'));
      ownAnswers(results);
      assert.ok(results.every((r) => r.endpoint === `127.0.0.1:${good.endpoint.port}`));
    } finally {
      await pool.close();
    }
  });

  it('a body far larger than its answers can be is cut off, not held in memory, and the list is answered elsewhere', async () => {
    const [bad, good] = [await liar('huge'), await liar('ok')];
    const pool = new SwarmPool([bad.endpoint, good.endpoint], { retry: FAST_RETRY });
    try {
      const run = scatterGather(pool, prompts(10), { maxTokens: 8 });
      const warnings: string[] = [];
      run.on('warning', (w) => warnings.push(w));
      const { results } = await run.done;
      assert.deepEqual(results.map((r) => r.status), Array(10).fill('ok'));
      ownAnswers(results);
      assert.ok(warnings.some((w) => /answered more than .* MB, far more than its answers can hold/.test(w)), warnings.join('\n'));
    } finally {
      await pool.close();
    }
  });

  it('one choice without text: that prompt alone is answered elsewhere', async () => {
    const [bad, good] = [await liar('null-text'), await liar('ok')];
    const pool = new SwarmPool([bad.endpoint, good.endpoint], { retry: FAST_RETRY });
    try {
      const list = prompts(20).map((p, i) => (i === 4 ? `${p} NULL` : p));
      const { results } = await scatterGather(pool, list, { maxTokens: 8 }).done;
      assert.deepEqual(results.map((r) => r.status), Array(20).fill('ok'));
      ownAnswers(results);
      assert.equal(results[4]!.endpoint, `127.0.0.1:${good.endpoint.port}`);
      assert.equal(results[0]!.endpoint, `127.0.0.1:${bad.endpoint.port}`);
    } finally {
      await pool.close();
    }
  });

  it("a proxy's 413 body cap: the list is split until it passes, and later lists keep the size", async () => {
    const capped = await liar('body-cap');
    const pool = new SwarmPool([capped.endpoint], { retry: FAST_RETRY });
    try {
      const { results } = await scatterGather(pool, prompts(400), { maxTokens: 8 }).done;
      assert.deepEqual(results.map((r) => r.status), Array(400).fill('ok'));
      ownAnswers(results);
      const accepted = capped.lists.filter((n) => n * 12 < BODY_CAP);
      assert.ok(accepted.length >= 2, `lists sent: ${capped.lists.join(' ')}`);
      capped.lists.length = 0;
      await scatterGather(pool, prompts(400), { maxTokens: 8 }).done;
      assert.ok(capped.lists.length < 40, `the learned size is kept: ${capped.lists.join(' ')}`);
    } finally {
      await pool.close();
    }
  });

  it('a streamed list whose choices carry no index is refused, never credited to prompt 0', async () => {
    const [bad, good] = [await liar('stream-no-index'), await liar('ok')];
    const pool = new SwarmPool([bad.endpoint], { retry: FAST_RETRY });
    try {
      const { results } = await scatterGather(pool, prompts(10), { maxTokens: 8, stream: true }).done;
      assert.ok(results.every((r) => !r.ok), 'no answer may be credited to a prompt it might not belong to');
      assert.match(results[0]!.error ?? '', /streamed choice index undefined/);
    } finally {
      await pool.close();
    }
    assert.ok(good);
  });

  it('429 with Retry-After on the only endpoint: the prompts wait as asked and are answered', async () => {
    const busy = await liar('busy-then-ok');
    const pool = new SwarmPool([busy.endpoint], { retry: { ...FAST_RETRY, budgetMs: 10_000 } });
    try {
      const t0 = performance.now();
      const { results } = await scatterGather(pool, prompts(200), { maxTokens: 8 }).done;
      assert.deepEqual(results.map((r) => r.status), Array(200).fill('ok'));
      ownAnswers(results);
      assert.ok(performance.now() - t0 >= BUSY_MS, 'the answer came after the server said it would be free');
      assert.ok(busy.lists.length <= 4, `${busy.lists.length} requests: not a retry storm`);
    } finally {
      await pool.close();
    }
  });

  it('a stream that ends without [DONE] after every choice finished is a success, its endpoint not benched', async () => {
    const cut = await liar('stream-no-done');
    const pool = new SwarmPool([cut.endpoint], { retry: FAST_RETRY, concurrency: 2 });
    try {
      for (const batch of [true, false]) {
        const { results } = await scatterGather(pool, prompts(30), { maxTokens: 8, stream: true, batch }).done;
        assert.deepEqual(results.map((r) => [r.status, r.attempts]), Array(30).fill(['ok', 1]), batch ? 'batched' : 'individual');
        ownAnswers(results);
        assert.equal(pool.endpoints[0]!.status, 'up');
      }
    } finally {
      await pool.close();
    }
  });

  for (const vllmVersion of ['0.10.0', '0.13']) {
    it(`two over-long prompts of the same length fail alone, the other 38 are answered (vLLM ${vllmVersion}'s wording)`, async () => {
      await withServer({ reply: 'echo', maxModelLen: 200, vllmVersion }, async (server) => {
        const pool = new SwarmPool([server.endpoint], { retry: FAST_RETRY });
        try {
          const long = 'word '.repeat(300);
          const list = prompts(40).map((p, i) => (i === 7 || i === 23 ? `${long}${i < 10 ? '0' : ''}${i}` : p));
          const { results } = await scatterGather(pool, list, { maxTokens: 8 }).done;
          assert.deepEqual(results.flatMap((r, i) => (r.ok ? [] : [i])), [7, 23]);
          assert.match(results[7]!.error!, /maximum context length/);
          // O(k log n): far fewer requests than one per prompt.
          assert.ok(server.stats().generationRequests <= 1 + 2 * 2 * Math.ceil(Math.log2(40)), `${server.stats().generationRequests} requests`);
        } finally {
          await pool.close();
        }
      });
    });
  }
});

/**
 * The panel's live rows (src/extension/panel/live-rows.ts) over a real run: the core's scatter on
 * the simulator over loopback HTTP. A run's next progress goes only once the page said `seen` the
 * last (or the run ends), so the page is never more than one message behind; every row goes once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scatterGather, SwarmPool } from '../src/core/index.ts';
import { LiveRows } from '../src/extension/panel/live-rows.ts';
import type { HostMessage } from '../src/panel/protocol.ts';
import { withServer } from './helpers/sim-server.ts';
import { FAST_RETRY } from './helpers/swarm.ts';
import { patience } from './helpers/patience.ts';

type Progress = Extract<HostMessage, { type: 'runProgress' }>;

async function until(probe: () => boolean, what: string, timeoutMs = patience(20_000)): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('live rows: progress to the panel', () => {
  it('holds the next progress until the page saw the last, then sends what came meanwhile as one; the end goes regardless; every row once', { timeout: patience(60_000) }, async () => {
    // Individual requests, 4 at a time, ~20 tokens at 10 ms: answers come one by one over a couple of seconds.
    await withServer({ reply: 'lorem', tpotMs: 10, answerTokens: 20 }, async (server) => {
      const pool = new SwarmPool([server.endpoint], { retry: FAST_RETRY, concurrency: 4 });
      try {
        const prompts = Array.from({ length: 120 }, (_, i) => `question ${i}`);
        const run = scatterGather(pool, prompts, { maxTokens: 40 });
        const posted: Progress[] = [];
        const live = new LiveRows('r1', run, prompts.length, (m) => (m.type === 'runProgress' && posted.push(m), true));
        let results = 0;
        run.on('result', (r) => {
          results++;
          live.add({ ...r, prompt: prompts[r.index]! });
        });
        await until(() => posted.length === 1, 'the first progress');
        // Unseen: more rows arrive, nothing more is sent.
        const resultsThen = results;
        await until(() => results >= resultsThen + 10, 'ten more answers');
        await new Promise((r) => setTimeout(r, 600)); // more than two of its pace's intervals
        assert.equal(posted.length, 1, 'no second progress before the page saw the first');
        // Seen: what waited goes as one message (within the pace), then it waits again.
        const waiting = results - posted[0]!.results.length;
        live.seen();
        await until(() => posted.length === 2, 'the second progress once the first was seen');
        assert.ok(posted[1]!.results.length >= waiting, `the rows that waited go together (${posted[1]!.results.length} ≥ ${waiting})`);
        // The page keeps up from here; the end is said whatever was seen.
        const seenAll = setInterval(() => live.seen(), 50);
        const report = await run.done;
        clearInterval(seenAll);
        live.drain();
        const rows = posted.flatMap((p) => p.results.map((r) => r.index)).sort((a, b) => a - b);
        assert.deepEqual(rows, prompts.map((_, i) => i), 'every row exactly once, in some message');
        assert.equal(report.results.filter((r) => r.ok).length, prompts.length);
        assert.equal(posted.at(-1)!.done, prompts.length, 'the last progress says the run is done');
      } finally {
        await pool.close();
      }
    });
  });
});

/** guided_* fields: one warning when an endpoint's /version says they are ignored there (vLLM ≥ 0.12). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scatterGather, SwarmPool } from '../src/core/index.ts';
import { withServer } from './helpers/sim-server.ts';

async function warningsFor(vllmVersion: string, extra: Record<string, unknown>): Promise<string[]> {
  return withServer({ vllmVersion }, async (server) => {
    const pool = new SwarmPool([server.endpoint]);
    try {
      const run = scatterGather(pool, ['a', 'b'], { maxTokens: 4, extra });
      const warnings: string[] = [];
      run.on('warning', (w) => warnings.push(w));
      const report = await run.done;
      assert.equal(report.summary.ok, 2);
      return warnings;
    } finally {
      await pool.close();
    }
  });
}

test('guided_json on vLLM 0.13: one line saying it is ignored there and what to use', async () => {
  const warnings = await warningsFor('0.13', { guided_json: { type: 'object' } });
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0]!, /^guided_json is silently ignored by vLLM 0\.12 and later \(127\.0\.0\.1:\d+ \(0\.13\.0\)\): use structured_outputs/);
});

test('no warning where guided_* still work (0.11) or none is asked for', async () => {
  assert.deepEqual(await warningsFor('0.11.0', { guided_json: { type: 'object' } }), []);
  assert.deepEqual(await warningsFor('latest', { structured_outputs: { json: { type: 'object' } } }), []);
});

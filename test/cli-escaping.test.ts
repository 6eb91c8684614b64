/**
 * Nothing from a server reaches a terminal unescaped: a hostile model id (`GET /v1/models`) in the
 * summary and `swarm health`, answers printed by reduce, pipeline and broadcast, JSONL rows on
 * stdout. The simulator serves the hostile name and echoes hostile prompts back as answers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonLines, runCli, suiteSim, writeText, type CliResult } from './helpers/cli.ts';
import { patience } from './helpers/patience.ts';

/** Sets the window title, clears the screen, a one-byte CSI (C1), and a right-to-left override. */
const HOSTILE = 'evil\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eliam';
/** What a terminal would act on: C0 but newline and tab, DEL, C1, bidi overrides and isolates. */
const RAW = /[\0-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

function clean(r: CliResult, what: string): void {
  assert.doesNotMatch(r.stdout, RAW, `${what}: stdout carries a raw control character`);
  assert.doesNotMatch(r.stderr, RAW, `${what}: stderr carries a raw control character`);
}

describe('output from hostile servers', { timeout: patience(120_000) }, () => {
  const suite = suiteSim('hostile', 2, ['--model', HOSTILE]);

  it('a model id from /v1/models: escaped in the summary header and in swarm health; --json keeps it exact', async () => {
    const prompts = await writeText(suite.dir, 'p.txt', 'hi\n');
    const r = await runCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', prompts]);
    assert.equal(r.code, 0, r.stderr);
    clean(r, 'scatter');
    assert.match(r.stderr.split('\n')[0]!, /^scatter-gather · batched · evil\\x1b\]0;pwned\\x07\\x1b\[2J\\x9b31m\\u202eliam$/);

    const health = await runCli(['health', '--hostfile', suite.sim.hostfile]);
    assert.equal(health.code, 0, health.stderr);
    clean(health, 'health');
    assert.match(health.stdout, /healthy {2}evil\\x1b\]0;pwned\\x07/);
    const json = await runCli(['health', '--hostfile', suite.sim.hostfile, '--json']);
    clean(json, 'health --json');
    assert.deepEqual(jsonLines(json.stdout).map((row) => row.models[0].id), [HOSTILE, HOSTILE], 'escaped the JSON way, it parses back to the name');
  });

  it('answers printed by reduce, pipeline and broadcast, and JSONL rows on stdout', async () => {
    const prompt = `say ${HOSTILE}`;
    const reduce = await runCli(['reduce', '--hostfile', suite.sim.hostfile, '--prompt', prompt, '--reduce-prompt', 'merge {responses}', '--quiet']);
    assert.equal(reduce.code, 0, reduce.stderr);
    clean(reduce, 'reduce');
    assert.match(reduce.stdout, /say evil\\x1b\]0;pwned\\x07\\x1b\[2J\\x9b31m\\u202eliam/);
    const reduceJson = await runCli(['reduce', '--hostfile', suite.sim.hostfile, '--prompt', prompt, '--reduce-prompt', 'merge {responses}', '--json', '--quiet']);
    clean(reduceJson, 'reduce --json');
    assert.ok((JSON.parse(reduceJson.stdout) as { text: string }).text.includes(HOSTILE), 'JSON stays JSON, with the exact text');

    const stages = await writeText(suite.dir, 'stages.json', JSON.stringify([{ name: 'echo', template: '{input}', agents: 1 }]));
    const pipeline = await runCli(['pipeline', '--hostfile', suite.sim.hostfile, '--stages', stages, '--input', prompt, '--quiet']);
    assert.equal(pipeline.code, 0, pipeline.stderr);
    clean(pipeline, 'pipeline');

    for (const aggregate of ['concat', 'vote']) {
      const broadcast = await runCli(['broadcast', '--hostfile', suite.sim.hostfile, '--prompt', prompt, '--aggregate', aggregate, '--quiet']);
      assert.equal(broadcast.code, 0, broadcast.stderr);
      clean(broadcast, `broadcast --aggregate ${aggregate}`);
      if (aggregate === 'vote') assert.equal(JSON.parse(broadcast.stdout).winner, `completion: ${prompt}`);
    }

    const prompts = await writeText(suite.dir, 'hostile.jsonl', `${JSON.stringify({ prompt })}\n`);
    const rows = await runCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', prompts, '--quiet']);
    assert.equal(rows.code, 0, rows.stderr);
    clean(rows, 'scatter rows on stdout');
    assert.equal(jsonLines(rows.stdout)[0]!.text, `completion: ${prompt}`, 'rows parse back to the exact answer');
  });
});

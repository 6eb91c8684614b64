/**
 * The pattern commands (blackboard, broadcast --aggregate, pipeline, reduce --items) with some
 * prompts failing, end to end over loopback HTTP: exit 1, what failed said on stderr (counts, which
 * round, stage or item), aggregates that report the votes they had, reduce's --out.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, jsonLines, killAll, runCli, startSim, tempDir, writeText, type CliResult, type Sim } from './helpers/cli.ts';
import { patience } from './helpers/patience.ts';

const shown = (r: CliResult) => `exit ${r.code ?? r.signal}\n--- stdout ---\n${r.stdout.slice(0, 2000)}\n--- stderr ---\n${r.stderr.slice(0, 2000)}`;

describe('pattern commands with failed prompts', { timeout: patience(120_000) }, () => {
  let dir = '';
  let cleanup: () => Promise<void>;
  let healthy: Sim;
  /** Every generation request answered 400: a prompt's own fault, never failed over. */
  let failing: Sim;
  /** One healthy endpoint, then the three failing ones. */
  let mixed = '';

  before(async () => {
    ensureBuilt();
    ({ dir, cleanup } = await tempDir());
    healthy = await startSim(dir, 'healthy', 2);
    failing = await startSim(dir, 'failing', 3, ['--fault-rate', '1', '--fault-status', '400']);
    mixed = await writeText(dir, 'mixed', `${[healthy.lines[0], ...failing.lines].join('\n')}\n`);
  });
  after(async () => {
    await Promise.all([healthy.stop(), failing.stop()]);
    await killAll();
    await cleanup();
  });

  it('broadcast --aggregate vote: exit 1, the endpoints that failed, and a confidence over every answer asked for (1 of 4 is 0.25); the winner as written', async () => {
    const r = await runCli(['broadcast', '--hostfile', mixed, '--prompt', 'Yes', '--aggregate', 'vote', '--max-tokens', '20', '--quiet']);
    assert.equal(r.code, 1, shown(r));
    assert.deepEqual(JSON.parse(r.stdout), { winner: 'completion: Yes', confidence: 0.25, votes: 1, failed: 3, distribution: [{ answer: 'completion: Yes', votes: 1 }] });
    assert.match(r.stderr, /^failed: 3 of 4 prompts$/m);
    assert.match(r.stderr, new RegExp(`^  broadcast: 3 of 4 failed \\(${failing.endpoints.join(', ')}\\): HTTP 400`, 'm'));

    const all = await runCli(['broadcast', '--hostfile', healthy.hostfile, '--prompt', 'Yes', '--aggregate', 'vote', '--max-tokens', '20', '--quiet']);
    assert.equal(all.code, 0, shown(all));
    assert.doesNotMatch(all.stderr, /failed/);
  });

  it('blackboard: exit 1, each round and section that lost entries, the board still printed', async () => {
    const roles = await writeText(dir, 'roles', `${healthy.lines[0]}\trole=hypotheses\n${failing.lines.slice(0, 2).map((l) => `${l}\trole=critiques`).join('\n')}\n`);
    const config = await writeText(dir, 'board.json', JSON.stringify({ sections: ['hypotheses', 'critiques'], prompt: 'As {section}, add to: {board}', maxRounds: 2 }));
    const r = await runCli(['blackboard', '--hostfile', roles, '--config', config, '--max-tokens', '20', '--quiet']);
    assert.equal(r.code, 1, shown(r));
    assert.match(r.stderr, /^failed: 4 of 6 prompts$/m);
    for (const round of [1, 2]) assert.match(r.stderr, new RegExp(`^  round ${round} · critiques: 2 of 2 failed \\(${failing.endpoints.slice(0, 2).join(', ')}\\): HTTP 400`, 'm'));
    assert.doesNotMatch(r.stderr, /hypotheses: /);
    assert.match(r.stdout, /^## hypotheses\n- completion: As hypotheses/);
  });

  it('pipeline: exit 1, each stage that lost answers, with its number and name', async () => {
    const stages = await writeText(dir, 'stages.json', JSON.stringify([{ name: 'draft', template: 'Draft: {input}', agents: 2 }, { name: 'pick', template: 'Pick: {input}', agents: 4, transform: 'vote' }]));
    const r = await runCli(['pipeline', '--hostfile', mixed, '--stages', stages, '--input', 'a poem', '--max-tokens', '40', '--quiet']);
    assert.equal(r.code, 1, shown(r));
    assert.match(r.stderr, /^failed: 4 of 6 prompts$/m);
    assert.match(r.stderr, new RegExp(`^  stage 1 · draft: 1 of 2 failed \\(${failing.endpoints[0]}\\)`, 'm'));
    assert.match(r.stderr, /^ {2}stage 2 · pick: 3 of 4 failed /m);
    assert.equal(JSON.parse(r.stdout).confidence, 0.25);
  });

  it('reduce --items: exit 1 naming the items that failed; --out holds every answer of every level', async () => {
    const small = await startSim(dir, 'small', 2, ['--max-model-len', '200']);
    try {
      // Items 4 and 13 are over the 200-token context: they fail for their own fault, the rest reduce.
      const items = Array.from({ length: 20 }, (_, i) => (i === 3 || i === 12 ? `item ${i + 1} ${'long '.repeat(250)}` : `item ${i + 1}`));
      const itemsFile = await writeText(dir, 'items.txt', items.join('\n'));
      const out = `${dir}/reduce.jsonl`;
      const r = await runCli(['reduce', '--hostfile', small.hostfile, '--prompt', '{item}', '--items', itemsFile, '--reduce-prompt', 'm {responses}', '--fanin', '3', '--max-tokens', '5', '--out', out, '--quiet']);
      assert.equal(r.code, 1, shown(r));
      assert.match(r.stderr, /^ {2}leaves \(items\): 2 of 20 failed \(item 4 "item 4 long long .*…", item 13 "item 13 long .*…"\): HTTP 400: .*maximum context length is 200 tokens/m);
      assert.ok(r.stdout.startsWith('completion: m '), 'the reduction of the other 18 is printed');
      const rows = jsonLines(await readFile(out, 'utf8'));
      assert.deepEqual(rows.map((row) => row.index), rows.map((_, i) => i));
      assert.deepEqual(rows.filter((row) => row.level === 0).map((row) => row.ok), items.map((_, i) => i !== 3 && i !== 12));
      assert.ok(rows.some((row) => row.level > 0), 'merge rows too');
    } finally {
      await small.stop();
    }
  });
});

/** `swarm embed`, `swarm sim --task embed` and `swarm broadcast --aggregate`, end to end as child processes over loopback HTTP. */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, jsonLines, killAll, runCli, startSim, tempDir, writeText } from './helpers/cli.ts';

before(() => ensureBuilt());
after(() => killAll());

describe('swarm embed', () => {
  it('writes one row per input, in order, with its embedding, from the role=embed servers of a mixed hostfile', async () => {
    const { dir, cleanup } = await tempDir();
    const emb = await startSim(dir, 'emb', 2, ['--task', 'embed', '--embedding-dim', '8']);
    const gen = await startSim(dir, 'gen', 2);
    try {
      assert.match(emb.ready, /serving sentence-transformers\/all-MiniLM-L6-v2/);
      assert.ok(emb.lines.every((l) => l.endsWith('\trole=embed')));
      const hostfile = await writeText(dir, 'mixed', [...gen.lines, ...emb.lines].join('\n') + '\n');
      const prompts = await writeText(dir, 'inputs.txt', 'alpha\nbeta\ngamma\n');
      const out = `${dir}/vectors.jsonl`;
      const r = await runCli(['embed', '--hostfile', hostfile, '--prompts', prompts, '--out', out, '--quiet']);
      assert.equal(r.code, 0, r.stderr);
      const rows = jsonLines(await readFile(out, 'utf8'));
      assert.deepEqual(rows.map((row) => [row.index, row.prompt, row.ok, row.embedding.length]), [[0, 'alpha', true, 8], [1, 'beta', true, 8], [2, 'gamma', true, 8]]);
      assert.deepEqual(rows.map((row) => row.endpoint), [0, 1, 0].map((i) => emb.endpoints[i]));

      const refused = await runCli(['embed', '--hostfile', gen.hostfile, '--prompts', prompts, '--quiet']);
      assert.equal(refused.code, 1);
      assert.match(jsonLines(refused.stdout)[0]!.error, /does not support Embeddings API/);
    } finally {
      await Promise.all([emb.stop(), gen.stop()]);
      await cleanup();
    }
  });
});

describe('swarm broadcast', () => {
  it('prints the answers as rows, or one aggregate of them; --slice and --sample pick a sub-pool', async () => {
    const { dir, cleanup } = await tempDir();
    const sim = await startSim(dir, 'hosts', 3);
    try {
      const base = ['broadcast', '--hostfile', sim.hostfile, '--prompt', 'Yes', '--max-tokens', '20', '--quiet'];
      const vote = await runCli([...base, '--aggregate', 'vote']);
      assert.equal(vote.code, 0, vote.stderr);
      assert.deepEqual(JSON.parse(vote.stdout), { winner: 'completion: Yes', confidence: 1, votes: 3, failed: 0, distribution: [{ answer: 'completion: Yes', votes: 3 }] });
      const rows = await runCli([...base, '--slice', '1:']);
      assert.deepEqual(jsonLines(rows.stdout).map((r) => [r.endpoint, r.text]), [[sim.endpoints[1], 'completion: Yes'], [sim.endpoints[2], 'completion: Yes']]);
      const sampled = await runCli([...base, '--sample', '2', '--aggregate', 'concat', '--out', `${dir}/rows.jsonl`]);
      assert.equal(sampled.stdout, 'completion: Yes\ncompletion: Yes\n');
      assert.equal(jsonLines(await readFile(`${dir}/rows.jsonl`, 'utf8')).length, 2);
      const stats = JSON.parse((await runCli([...base, '--aggregate', 'stats'])).stdout);
      assert.equal(stats.count, 0);
      assert.equal(stats.errors.length, 3, 'echoed text is not a number');
    } finally {
      await sim.stop();
      await cleanup();
    }
  });
});

describe('swarm pipeline', () => {
  it('runs the stages of a JSON file, each fed the last one\'s output; a bad stages file is one line per problem and exit 2', async () => {
    const { dir, cleanup } = await tempDir();
    const sim = await startSim(dir, 'hosts', 3);
    try {
      const stages = await writeText(dir, 'stages.json', JSON.stringify([
        { name: 'draft', template: 'Draft: {input}', agents: 2 },
        { name: 'pick', template: 'Pick: {input}', agents: 3, transform: 'vote' },
      ]));
      const out = `${dir}/answers.jsonl`;
      const r = await runCli(['pipeline', '--hostfile', sim.hostfile, '--stages', stages, '--input', 'a poem', '--max-tokens', '40', '--out', out, '--json', '--quiet']);
      assert.equal(r.code, 0, r.stderr);
      const outcome = JSON.parse(r.stdout);
      assert.deepEqual(outcome.stages.map((s: { name: string; endpoints: number }) => [s.name, s.endpoints]), [['draft', 2], ['pick', 3]]);
      const draft = 'completion: Draft: a poem\ncompletion: Draft: a poem';
      assert.equal(outcome.stages[0].output, draft, 'the first stage joins its two answers');
      assert.equal(JSON.parse(outcome.output).winner, `completion: Pick: ${draft}`, 'the last stage votes (answers compared case-folded, the winner as written)');
      const rows = jsonLines(await readFile(out, 'utf8'));
      assert.deepEqual(rows.map((row) => row.level), [0, 0, 1, 1, 1]);

      const bad = await writeText(dir, 'bad.json', JSON.stringify([{ template: 'no placeholder', agents: 0, transform: 'nope' }]));
      const refused = await runCli(['pipeline', '--hostfile', sim.hostfile, '--stages', bad, '--input', 'x']);
      assert.equal(refused.code, 2);
      assert.deepEqual(refused.stderr.trim().split('\n').map((l) => l.replace(/^.*stage 1: /, '')), [
        '"template" must be a string containing {input}',
        '"agents" must be a whole number of at least 1',
        '"transform" must be one of vote, concat, best-of, top-k, merge, stats',
      ]);
    } finally {
      await sim.stop();
      await cleanup();
    }
  });
});

describe('swarm blackboard', () => {
  it('each section\'s role= endpoints add their entries round after round, until an entry matches; a bad config is exit 2', async () => {
    const { dir, cleanup } = await tempDir();
    const sim = await startSim(dir, 'hosts', 2);
    try {
      const [first, second] = sim.lines;
      const hostfile = await writeText(dir, 'board.hostfile', `${first}\trole=hypotheses\n${second}\trole=critiques\n`);
      const config = await writeText(dir, 'board.json', JSON.stringify({ sections: ['hypotheses', 'critiques'], prompt: 'As {section} (round entries so far: {board})', maxRounds: 5, until: 'As critiques' }));
      const r = await runCli(['blackboard', '--hostfile', hostfile, '--config', config, '--max-tokens', '200', '--json', '--quiet']);
      assert.equal(r.code, 0, r.stderr);
      const outcome = JSON.parse(r.stdout);
      assert.equal(outcome.rounds, 1, 'the first critique matches "until": one round');
      assert.equal(outcome.board.hypotheses.length, 1);
      assert.match(outcome.board.critiques[0], /^completion: As critiques .*## hypotheses\n- completion: As hypotheses/s, 'the critique saw the hypothesis on the board');

      const bad = await writeText(dir, 'bad.json', JSON.stringify({ sections: [], prompt: 'no board', until: '(' }));
      const refused = await runCli(['blackboard', '--hostfile', hostfile, '--config', bad]);
      assert.equal(refused.code, 2);
      assert.equal(refused.stderr.trim().split('\n').length, 3, refused.stderr);
    } finally {
      await sim.stop();
      await cleanup();
    }
  });
});

describe('sub-pool and route flags', () => {
  it('every command that sends prompts takes --slice, --sample and --route, and refuses a bad one with one line and exit 2', async () => {
    const { dir, cleanup } = await tempDir();
    const sim = await startSim(dir, 'hosts', 3);
    try {
      const prompts = await writeText(dir, 'prompts.txt', 'a\nb\nc\nd\n');
      const scatter = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', prompts, '--slice', '1:', '--quiet']);
      assert.equal(scatter.code, 0, scatter.stderr);
      assert.deepEqual(jsonLines(scatter.stdout).map((r) => r.endpoint), [1, 2, 1, 2].map((i) => sim.endpoints[i]), 'prompt i goes to endpoint i mod 2 of the slice');
      const routed = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', prompts, '--route', 'least-requests', '--no-batch', '--quiet']);
      assert.equal(routed.code, 0, routed.stderr);
      assert.deepEqual(jsonLines(routed.stdout).map((r) => [r.index, r.ok]), [[0, true], [1, true], [2, true], [3, true]]);
      const reduce = await runCli(['reduce', '--hostfile', sim.hostfile, '--prompt', 'leaf', '--reduce-prompt', 'merge {responses}', '--sample', '2', '--route', 'prefix-aware', '--json', '--quiet']);
      assert.equal(reduce.code, 0, reduce.stderr);
      assert.equal(JSON.parse(reduce.stdout).levels[0].texts.length, 2, 'two sampled endpoints answer the leaf prompt');

      const stages = await writeText(dir, 'stages.yaml', 'stages:\n  - name: draft\n    template: "Draft: {input}"\n    agents: 3\n  - name: pick\n    template: "Pick: {input}"\n    agents: 3\n    transform: vote\n');
      const pipeline = await runCli(['pipeline', '--hostfile', sim.hostfile, '--stages', stages, '--input', 'a poem', '--slice', ':-1', '--json', '--quiet']);
      assert.equal(pipeline.code, 0, pipeline.stderr);
      assert.deepEqual(JSON.parse(pipeline.stdout).stages.map((s: { name: string; endpoints: number }) => [s.name, s.endpoints]), [['draft', 2], ['pick', 2]], 'YAML stages on the first two endpoints');
      const badYaml = await writeText(dir, 'bad.yaml', 'stages: [unclosed\n');
      const refusedYaml = await runCli(['pipeline', '--hostfile', sim.hostfile, '--stages', badYaml, '--input', 'x']);
      assert.equal(refusedYaml.code, 2);
      assert.match(refusedYaml.stderr, /^.*bad\.yaml: not valid YAML \(.+\)\n$/);

      const config = await writeText(dir, 'board.json', JSON.stringify({ sections: ['x'], prompt: '{section} {board}' }));
      const bad: Array<[string[], RegExp]> = [
        [['scatter', '--prompts', prompts, '--slice', '1-2'], /--slice must look like a:b/],
        [['reduce', '--prompt', 'p', '--reduce-prompt', '{responses}', '--sample', '0'], /--sample must be an integer from 1/],
        [['broadcast', '--prompt', 'p', '--route', 'random'], /--route.*Allowed choices are round-robin, least-requests, least-load, kv-cache, prefix-aware/],
        [['embed', '--prompts', prompts, '--sample', 'two'], /--sample must be an integer/],
        [['pipeline', '--stages', stages, '--input', 'x', '--slice', 'a:b'], /--slice must look like a:b/],
        [['blackboard', '--config', config, '--route', 'fastest'], /Allowed choices/],
      ];
      for (const [args, message] of bad) {
        const r = await runCli([...args, '--hostfile', sim.hostfile]);
        assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
        const [line] = r.stderr.split('\n');
        assert.match(line!, message, 'the first line says what is wrong (usage hints follow)');
        assert.equal(r.stderr.match(/^error/gm)?.length, 1, r.stderr);
      }
    } finally {
      await sim.stop();
      await cleanup();
    }
  });
});

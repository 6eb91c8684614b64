import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, jsonLines, killAll, runCli, startSim, tempDir, writeText, type CliResult } from './helpers/cli.ts';

const shown = (r: CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

describe('swarm on the llama engine (real inference)', () => {
  before(ensureBuilt);
  after(killAll);

  it('swarm sim --engine llama serves a hostfile that swarm scatter runs batched (chat template) and individually: greedy answers agree', async () => {
    const { dir, cleanup } = await tempDir();
    const sim = await startSim(dir, 'llama.hostfile', 2, ['--engine', 'llama', '--parallel', '2'], {}, 60_000);
    try {
      assert.match(sim.ready, /ready: 2 llama\.cpp vLLM server\(s\) serving swarm-lab-tiny/);
      const prompts = await writeText(dir, 'p.txt', 'What is a swarm?\nName three colors.\nWrite a haiku.\nhello\n');
      const outs = [];
      for (const mode of ['--batch', '--no-batch']) {
        const out = `${dir}/${mode.slice(2)}.jsonl`;
        const r = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', prompts, '--max-tokens', '12', '--temperature', '0', mode, '--out', out], { timeoutMs: 60_000 });
        assert.equal(r.code, 0, shown(r));
        outs.push(jsonLines(await readFile(out, 'utf8')));
      }
      const [batched, individual] = outs as [Array<Record<string, unknown>>, Array<Record<string, unknown>>];
      assert.deepEqual(batched.map((r) => [r['status'], r['template']]), Array(4).fill(['ok', 'skeleton']));
      assert.deepEqual(batched.map((r) => r['text']), individual.map((r) => r['text']));
    } finally {
      await sim.stop();
      await cleanup();
    }
  });

  it('demo --engine llama compares batched with individual on real inference, exit 0', async () => {
    const r = await runCli(['demo', '--engine', 'llama'], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, shown(r));
    assert.equal(r.stdout.match(/64 ok · 0 failed · 0 cancelled/g)?.length, 2, r.stdout);
    assert.match(r.stdout, /prompts placed in the server's chat template, rendered once/);
    // The first batched round pays for the template: the batch chat endpoint asked once (this server predates it), three /tokenize (two sentinels, and a check of the SentencePiece reading).
    assert.match(r.stdout, /over all rounds batched sent 10 HTTP requests \(\/v1\/completions 6 · \/tokenize 3 · \/v1\/chat\/completions\/batch \(probe\) 1\) where individual sent [\d,]+ \(\/v1\/chat\/completions [\d,]+\)/);
  });

  it('a model file that is not a GGUF is one line and exit 2', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const bad = await writeText(dir, 'bad.gguf', 'not a model\n');
      const r = await runCli(['sim', '--engine', 'llama', '--endpoints', '1', '--model-file', bad], { timeoutMs: 60_000 });
      assert.equal(r.code, 2, shown(r));
      assert.match(r.stderr.trim(), /^--engine llama: cannot load .*bad\.gguf as a GGUF model/);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    } finally {
      await cleanup();
    }
  });
});

import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, finished, jsonLines, killAll, runCli, spawnCli, startSim, tempDir, waitFor, writeText } from './helpers/cli.ts';

before(() => ensureBuilt());
after(() => killAll());

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `question ${i}`);

/** Exactly one row per prompt, in input order, each carrying its prompt and (when ok) its own answer. */
function assertComplete(rows: Array<Record<string, any>>, prompts: readonly string[]): void {
  assert.equal(rows.length, prompts.length);
  rows.forEach((r, i) => {
    assert.equal(r.index, i);
    assert.equal(r.prompt, prompts[i]);
    if (r.ok) assert.equal(r.text, `completion: ${prompts[i]}`);
  });
}

describe('results files that survive a crash', () => {
  it('a run killed mid-way left every finished row on disk; --resume sends only the rest and completes the file in order', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const sim = await startSim(dir, 'h', 2, ['--ttft-ms', '20', '--max-num-seqs', '4']);
      const prompts = numbered(300);
      const promptsFile = await writeText(dir, 'p.txt', prompts.join('\n'));
      const out = `${dir}/r.jsonl`;
      const child = spawnCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--no-batch', '--concurrency', '4', '--out', out, '--quiet']);
      const done = finished(child, 'scatter');
      // Rows reach the disk as results finish, long before the run ends.
      await waitFor(() => (existsSync(out) && statSync(out).size > 20_000 ? true : undefined), 20_000, 'rows on disk');
      child.kill('SIGKILL');
      assert.equal((await done).signal, 'SIGKILL');
      const partial = jsonLines(await readFile(out, 'utf8'));
      assert.ok(partial.length > 0 && partial.length < prompts.length, `${partial.length} rows before the kill`);
      for (const r of partial) assert.equal(r.text, `completion: ${prompts[r.index]}`, 'every row on disk is whole and its own');

      const resumed = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--no-batch', '--resume', out], { timeoutMs: 60_000 });
      assert.equal(resumed.code, 0, resumed.stderr);
      assertComplete(jsonLines(await readFile(out, 'utf8')), prompts);
      const sent = Number(/prompts\s+([\d,]+) ok/.exec(resumed.stderr)?.[1]?.replace(/,/g, ''));
      assert.equal(sent, prompts.length - partial.filter((r) => r.ok).length, 'only prompts without a good row were sent');

      const again = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--resume', out]);
      assert.equal(again.code, 0);
      assert.match(again.stderr, /nothing to send/);
    } finally {
      await cleanup();
    }
  });

  it('--retry-failed sends only the failed and cancelled rows, reading their prompts from the file', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const sim = await startSim(dir, 'h', 1);
      const prompts = numbered(8);
      const out = `${dir}/r.jsonl`;
      const promptsFile = await writeText(dir, 'p.txt', prompts.join('\n'));
      assert.equal((await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--out', out, '--quiet'])).code, 0);
      // Mark two rows failed, as a flaky endpoint would have left them.
      const rows = jsonLines(await readFile(out, 'utf8'));
      for (const i of [2, 5]) Object.assign(rows[i]!, { status: i === 2 ? 'failed' : 'cancelled', ok: false, text: '', error: 'HTTP 503' });
      await writeFile(out, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const retried = await runCli(['scatter', '--hostfile', sim.hostfile, '--retry-failed', out]);
      assert.equal(retried.code, 0, retried.stderr);
      assert.match(retried.stderr, /prompts\s+2 ok/);
      assertComplete(jsonLines(await readFile(out, 'utf8')), prompts);
    } finally {
      await cleanup();
    }
  });

  it('bad resume input is one line and exit 2', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const sim = await startSim(dir, 'h', 1);
      const promptsFile = await writeText(dir, 'p.txt', 'a\nb\n');
      const holes = await writeText(dir, 'holes.jsonl', '{"index":0,"prompt":"a","status":"ok"}\n{"index":2,"prompt":"c","status":"failed"}\n');
      const cases: Array<[string[], RegExp]> = [
        [['--retry-failed', holes], /no row for prompt 1/],
        [['--retry-failed', `${dir}/missing.jsonl`], /cannot read results/],
        [['--resume', holes, '--prompts', promptsFile, '--out', `${dir}/x.jsonl`], /drop --out/],
        [['--retry-failed', holes, '--prompts', promptsFile], /drop --prompts/],
      ];
      for (const [args, message] of cases) {
        const r = await runCli(['scatter', '--hostfile', sim.hostfile, ...args]);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, message);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      }
    } finally {
      await cleanup();
    }
  });
});

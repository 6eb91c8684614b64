import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, finished, jsonLines, killAll, runCli, spawnCli, startSim, tempDir, waitFor, writeText } from './helpers/cli.ts';
import { smallDisk } from './helpers/tmpfs.ts';

before(() => ensureBuilt());
after(() => killAll());

/** Files a run writes beside its results and must not leave behind. */
const leftovers = (dir: string) => readdirSync(dir).filter((f) => /\.(partial|sorting|lock)/.test(f));

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
      // Rows reach the disk (the run's .partial file) as results finish, long before the run ends.
      const partialFile = `${out}.partial`;
      await waitFor(() => (existsSync(partialFile) && statSync(partialFile).size > 20_000 ? true : undefined), 20_000, 'rows on disk');
      child.kill('SIGKILL');
      assert.equal((await done).signal, 'SIGKILL');
      assert.ok(!existsSync(out), 'no results file until the run is complete');
      const partial = jsonLines(await readFile(partialFile, 'utf8'));
      assert.ok(partial.length > 0 && partial.length < prompts.length, `${partial.length} rows before the kill`);
      for (const r of partial) assert.equal(r.text, `completion: ${prompts[r.index]}`, 'every row on disk is whole and its own');

      const resumed = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--no-batch', '--resume', out], { timeoutMs: 60_000 });
      assert.equal(resumed.code, 0, resumed.stderr);
      assertComplete(jsonLines(await readFile(out, 'utf8')), prompts);
      assert.deepEqual(leftovers(dir), [], 'no .partial, .sorting or .lock left');
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

describe('results files that cannot be lost or destroyed', () => {
  /** Exit 2, one line naming `message`, and every file in `files` byte for byte as it was. */
  async function refused(args: string[], message: RegExp, files: string[]): Promise<void> {
    const before = await Promise.all(files.map((f) => readFile(f)));
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args.join(' ')}\n${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.deepEqual(await Promise.all(files.map((f) => readFile(f))), before, `${args.join(' ')} left its files untouched`);
  }

  it('a second run on the same --out is refused (exit 2) and the first completes unharmed', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const sim = await startSim(dir, 'h', 2, ['--ttft-ms', '20', '--max-num-seqs', '2']);
      const prompts = numbered(200);
      const promptsFile = await writeText(dir, 'p.txt', prompts.join('\n'));
      const others = await writeText(dir, 'o.txt', numbered(200).map((p) => `other ${p}`).join('\n'));
      const out = `${dir}/r.jsonl`;
      const first = finished(spawnCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--no-batch', '--concurrency', '2', '--out', out, '--quiet']), 'first', 60_000);
      await waitFor(() => (existsSync(`${out}.partial`) && statSync(`${out}.partial`).size > 0 ? true : undefined), 20_000, 'the first run writing');
      const second = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', others, '--out', out, '--quiet']);
      assert.equal(second.code, 2, second.stderr);
      assert.match(second.stderr, /^--out .*r\.jsonl is being written by process \d+ on .*; wait for it to end or choose another file/);
      assert.equal(second.stderr.trim().split('\n').length, 1, second.stderr);
      const r = await first;
      assert.equal(r.code, 0, r.stderr);
      assertComplete(jsonLines(await readFile(out, 'utf8')), prompts);
      assert.deepEqual(leftovers(dir), []);
    } finally {
      await cleanup();
    }
  });

  it('--resume and --retry-failed refuse inputs and files that are not these prompts\' results: exit 2, one line, nothing touched', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const sim = await startSim(dir, 'h', 1);
      const prompts = await writeText(dir, 'p.jsonl', numbered(40).map((p, i) => JSON.stringify({ prompt: p, id: i })).join('\n'));
      const out = `${dir}/r.jsonl`;
      assert.equal((await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', prompts, '--out', out, '--quiet'])).code, 0);
      const fewer = await writeText(dir, 'fewer.jsonl', numbered(20).map((p, i) => JSON.stringify({ prompt: p, id: i })).join('\n'));
      const unrelated = await writeText(dir, 'two.txt', 'alpha\nbeta\n');
      // The same prompt texts with their ids in another order: matching on text alone would keep the wrong inputs.
      const reordered = await writeText(dir, 'reordered.jsonl', numbered(40).map((p, i) => JSON.stringify({ prompt: p, id: 39 - i })).join('\n'));
      const files = [out, prompts, sim.hostfile];
      const scatter = ['scatter', '--hostfile', sim.hostfile];
      await refused([...scatter, '--prompts', prompts, '--resume', prompts], /--resume .*p\.jsonl is the --prompts file/, files);
      await refused([...scatter, '--prompts', prompts, '--resume', sim.hostfile], /--resume .*h is the --hostfile file/, files);
      await refused([...scatter, '--retry-failed', sim.hostfile], /--retry-failed .*h is the --hostfile file/, files);
      await refused([...scatter, '--retry-failed', prompts], /p\.jsonl:1: not a result row \(no "index"\)/, files);
      await refused([...scatter, '--prompts', fewer, '--resume', out], /r\.jsonl:21: a row for index 20, but .*fewer\.jsonl has 20 prompts: not its results/, files);
      await refused([...scatter, '--prompts', unrelated, '--resume', out], /r\.jsonl:1: the row for index 0 is for "question 0", but prompt 0 of .*two\.txt is "alpha"/, files);
      await refused([...scatter, '--prompts', reordered, '--resume', out], /r\.jsonl:1: the row for index 0 has input \{"id":0\}, but prompt 0 of .*reordered\.jsonl has \{"id":39\}/, files);
      assert.deepEqual(leftovers(dir), []);
    } finally {
      await cleanup();
    }
  });

  it("a new run on a file whose last run was killed is refused while that run's rows wait (exit 2); --resume completes them", async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const sim = await startSim(dir, 'h', 1, ['--ttft-ms', '20', '--max-num-seqs', '2']);
      const prompts = numbered(200);
      const promptsFile = await writeText(dir, 'p.txt', prompts.join('\n'));
      const out = `${dir}/r.jsonl`;
      const child = spawnCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--no-batch', '--concurrency', '2', '--out', out, '--quiet']);
      const done = finished(child, 'scatter');
      await waitFor(() => (existsSync(`${out}.partial`) && statSync(`${out}.partial`).size > 2_000 ? true : undefined), 20_000, 'rows on disk');
      child.kill('SIGKILL');
      await done;
      await refused(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--out', out], /r\.jsonl\.partial holds the rows of an unfinished run; complete it with --resume/, [`${out}.partial`]);
      // The killed run's lock names a process that is gone: --resume takes it over.
      const resumed = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--resume', out, '--quiet'], { timeoutMs: 60_000 });
      assert.equal(resumed.code, 0, resumed.stderr);
      assertComplete(jsonLines(await readFile(out, 'utf8')), prompts);
      assert.deepEqual(leftovers(dir), []);
    } finally {
      await cleanup();
    }
  });

  it('the --out folder removed mid-run: exit 1 and one line saying the folder is gone and what was kept', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const sim = await startSim(dir, 'h', 1, ['--ttft-ms', '20', '--max-num-seqs', '2']);
      const promptsFile = await writeText(dir, 'p.txt', numbered(100).join('\n'));
      const folder = `${dir}/runs`;
      await mkdir(folder);
      const child = spawnCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--no-batch', '--concurrency', '2', '--out', `${folder}/r.jsonl`, '--quiet']);
      const done = finished(child, 'scatter', 60_000);
      await waitFor(() => (existsSync(`${folder}/r.jsonl.partial`) && statSync(`${folder}/r.jsonl.partial`).size > 0 ? true : undefined), 20_000, 'rows on disk');
      await rm(folder, { recursive: true });
      const r = await done;
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^error: cannot put .*r\.jsonl in input order: the folder .*runs no longer exists; no rows kept; 100 rows not written$/m);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    } finally {
      await cleanup();
    }
  });

  const disk = smallDisk(192);
  it('a full disk: exit 1, one line with what was kept, no stale .sorting; --resume completes the file once there is room', { skip: disk.skip }, async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const sim = await startSim(dir, 'h', 2);
      const prompts = numbered(600).map((p) => `${'padding '.repeat(40)}${p}`);
      const promptsFile = await writeText(dir, 'p.txt', prompts.join('\n'));
      const out = join(disk.dir, 'r.jsonl');
      const r = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--out', out], { timeoutMs: 60_000 });
      assert.equal(r.code, 1, r.stderr);
      const error = r.stderr.split('\n').filter((l) => l.startsWith('error:'));
      assert.equal(error.length, 1, r.stderr);
      assert.match(error[0]!, /ENOSPC: no space left on device; kept [\d,]+ rows \(.* in .*r\.jsonl\.partial\).*swarm scatter --resume .*r\.jsonl --prompts .* completes it$/);
      assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
      assert.deepEqual(readdirSync(disk.dir), ['r.jsonl.partial']);
      // Room again: the rows move to a bigger disk, as a user would copy them, and --resume completes them.
      await copyFile(`${out}.partial`, `${dir}/r.jsonl.partial`);
      const resumed = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--resume', `${dir}/r.jsonl`, '--quiet'], { timeoutMs: 60_000 });
      assert.equal(resumed.code, 0, resumed.stderr);
      assertComplete(jsonLines(await readFile(`${dir}/r.jsonl`, 'utf8')), prompts);
    } finally {
      await cleanup();
    }
  });
  after(() => disk.remove());
});

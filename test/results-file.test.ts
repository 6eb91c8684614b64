/**
 * Results files that can neither be lost nor destroyed, in the core: the lock, resume plans over
 * any earlier file (property tests), a file deleted or a folder removed under a run, and a full disk
 * (a small tmpfs, where this machine lets us mount one).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  failedResult,
  lockResults,
  OrderedJsonlWriter,
  planResume,
  planRetryFailed,
  ResultsFileError,
  ResultsLockedError,
  ResumeError,
  type PromptInput,
  type PromptResult,
  type PromptStatus,
} from '../src/core/index.ts';
import { resultRow } from '../src/core/results/result-row.ts';
import { smallDisk } from './helpers/tmpfs.ts';

function result(index: number, p: PromptInput, status: PromptStatus, text: string): PromptResult {
  return { ...failedResult({ index, prompt: p.prompt, input: p.input ?? {}, queuedMs: 0 }, 'failed', 'x', 1), status, ok: status === 'ok', text, error: status === 'ok' ? null : 'x' };
}

const scratch = () => mkdtempSync(join(tmpdir(), 'results-file-'));
/** Files a writer makes beside its results and must not leave behind. */
const leftovers = (dir: string) => readdirSync(dir).filter((f) => /\.(partial|sorting|lock)/.test(f));
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').slice(0, -1);

describe('the results lock', () => {
  it('refuses a second writer while the first holds the file, and frees it on close', async () => {
    const dir = scratch();
    try {
      const path = join(dir, 'out.jsonl');
      const first = new OrderedJsonlWriter({ path });
      assert.throws(() => new OrderedJsonlWriter({ path }), (err: Error) => err instanceof ResultsLockedError && err.message.includes(`process ${process.pid}`));
      first.add(result(0, { prompt: 'a' }, 'ok', 'A'));
      assert.equal(await first.close(1), 1);
      assert.deepEqual(leftovers(dir), []);
      const second = new OrderedJsonlWriter({ path });
      second.add(result(0, { prompt: 'a' }, 'ok', 'B'));
      await second.close(1);
      assert.match(readFileSync(path, 'utf8'), /"text":"B"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("takes over the lock of a process that is gone (killed runs leave theirs behind)", () => {
    const dir = scratch();
    try {
      const path = join(dir, 'out.jsonl');
      const gone = spawnSync(process.execPath, ['-e', '']).pid!;
      writeFileSync(`${path}.lock`, JSON.stringify({ pid: gone, host: hostname(), since: 'earlier' }));
      const lock = lockResults(path);
      assert.match(readFileSync(`${path}.lock`, 'utf8'), new RegExp(`"pid":${process.pid}`));
      lock.release();
      assert.deepEqual(leftovers(dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("respects a lock held on another host (its process cannot be asked)", () => {
    const dir = scratch();
    try {
      const path = join(dir, 'out.jsonl');
      writeFileSync(`${path}.lock`, JSON.stringify({ pid: 1, host: 'another-login-node', since: 'earlier' }));
      assert.throws(() => lockResults(path), /process 1 on another-login-node.*delete .*out\.jsonl\.lock/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** One line of an earlier results file, as a generator makes it. */
interface Saved {
  index: number;
  status: PromptStatus;
  /** A row that is not of these prompts: another prompt text, or another input. */
  tamper: 'none' | 'prompt' | 'input';
  inPartial: boolean;
}

const savedLine = (n: number) =>
  fc.record<Saved>({
    index: fc.integer({ min: 0, max: n + 1 }),
    status: fc.constantFrom('ok', 'ok', 'failed', 'cancelled'),
    tamper: fc.constantFrom('none', 'none', 'none', 'none', 'none', 'none', 'none', 'prompt', 'input'),
    inPartial: fc.boolean(),
  });

/** Prompts drawn from few texts, so rows of another index often carry the same text. */
const prompts = fc.array(
  fc.record({ prompt: fc.constantFrom('same', 'other', 'é€😀'), id: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }) }).map(({ prompt, id }) => ({ prompt, input: id === undefined ? {} : { id } })),
  { minLength: 1, maxLength: 16 },
);

const resumeCase = prompts.chain((ps) =>
  fc.record({
    prompts: fc.constant(ps as PromptInput[]),
    saved: fc.array(savedLine(ps.length), { maxLength: 24 }),
    garbage: fc.option(fc.constantFrom('not json', '{"no":"index"}', '[1,2]', 'question 3'), { nil: undefined }),
    tornFinal: fc.boolean(),
    tornPartial: fc.boolean(),
    order: fc.array(fc.nat(), { maxLength: 20 }),
  }),
);

describe('resuming any earlier results file', () => {
  it('refuses, untouched, a file that is not these prompts\' results; else completes it keeping every good row byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(resumeCase, async ({ prompts: ps, saved, garbage, tornFinal, tornPartial, order }) => {
        const dir = scratch();
        try {
          const path = join(dir, 'out.jsonl');
          const row = (s: Saved) => {
            const p = ps[s.index] ?? { prompt: 'beyond', input: {} };
            const shown = s.tamper === 'prompt' ? { ...p, prompt: `${p.prompt}!` } : s.tamper === 'input' ? { ...p, input: { id: 99 } } : p;
            return resultRow(result(s.index, shown, s.status, `old ${s.index} ${s.status}`), s.index);
          };
          const finalLines = saved.filter((s) => !s.inPartial).map(row);
          const partialLines = saved.filter((s) => s.inPartial).map(row);
          if (garbage !== undefined) finalLines.splice(finalLines.length >> 1, 0, garbage);
          const text = (ls: string[], torn: boolean) => ls.map((l) => `${l}\n`).join('') + (torn ? '{"index":0,"prompt":"sa' : '');
          writeFileSync(path, text(finalLines, tornFinal));
          if (partialLines.length || tornPartial) writeFileSync(`${path}.partial`, text(partialLines, tornPartial));
          const before = readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'latin1')]);

          const refused = garbage !== undefined || saved.some((s) => s.index >= ps.length || s.tamper !== 'none');
          if (refused) {
            assert.throws(() => planResume(path, ps), ResumeError);
            assert.deepEqual(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'latin1')]), before, 'refused files are untouched');
            return;
          }
          // The latest row of each index: the results file's, then its .partial's, later lines winning.
          const latest = new Map<number, Saved>();
          for (const s of [...saved.filter((x) => !x.inPartial), ...saved.filter((x) => x.inPartial)]) latest.set(s.index, s);
          const plan = planResume(path, ps);
          assert.deepEqual(plan.todo, ps.map((_, i) => i).filter((i) => latest.get(i)?.status !== 'ok'));

          const writer = new OrderedJsonlWriter({ path, indexOf: (i) => plan.todo[i]!, continued: plan.continued });
          const sent = plan.todo.map((_, k) => k);
          for (const o of order) sent.push(sent.splice(o % Math.max(1, sent.length), 1)[0]!); // any arrival order
          for (const k of sent.filter((k) => k !== undefined)) writer.add(result(k, ps[plan.todo[k]!]!, 'ok', `new ${plan.todo[k]}`));
          assert.equal(await writer.close(ps.length), ps.length);

          const got = lines(path);
          assert.equal(got.length, ps.length);
          got.forEach((l, i) => {
            const kept = latest.get(i);
            if (kept?.status === 'ok') assert.equal(l, row(kept), `row ${i} kept byte for byte`);
            else assert.deepEqual((({ index, prompt, input, text }) => ({ index, prompt, input, text }))(JSON.parse(l)), { index: i, prompt: ps[i]!.prompt, input: ps[i]!.input, text: `new ${i}` });
          });
          assert.deepEqual(leftovers(dir), []);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      {
        numRuns: 300,
        // Found at 7,341 runs: a complete file whose last line is cut short was kept as it was, tail and all, and failed its read-back.
        examples: [[{ prompts: [{ prompt: 'same', input: { id: 0 } }], saved: [{ index: 0, status: 'ok', tamper: 'none', inPartial: false }], garbage: undefined, tornFinal: true, tornPartial: false, order: [] }]],
      },
    );
  });

  it('--retry-failed: sends exactly the failed and cancelled rows of a complete file; refuses one with a gap', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom<PromptStatus>('ok', 'failed', 'cancelled'), { minLength: 1, maxLength: 20 }), fc.option(fc.nat(), { nil: undefined }), async (statuses, gap) => {
        const dir = scratch();
        try {
          const path = join(dir, 'out.jsonl');
          const rows = statuses.map((s, i) => resultRow(result(i, { prompt: `p${i}`, input: { id: i } }, s, `old ${i}`), i));
          const at = gap === undefined ? -1 : gap % rows.length;
          if (at >= 0) rows.splice(at, 1);
          writeFileSync(path, rows.map((l) => `${l}\n`).join(''));
          // A missing last row leaves a complete, shorter file; any other leaves a gap.
          if (!rows.length) return assert.throws(() => planRetryFailed(path), /no result rows/);
          if (at >= 0 && at < rows.length) return assert.throws(() => planRetryFailed(path), /no row for prompt/);
          const plan = planRetryFailed(path);
          assert.deepEqual(plan.todo, plan.prompts.map((_, i) => i).filter((i) => statuses[i] !== 'ok'));
          const writer = new OrderedJsonlWriter({ path, indexOf: (i) => plan.todo[i]!, continued: plan.continued });
          plan.todo.forEach((index, k) => writer.add(result(k, plan.prompts[index]!, 'ok', `new ${index}`)));
          await writer.close(plan.prompts.length);
          const got = lines(path).map((l) => JSON.parse(l) as PromptResult);
          assert.deepEqual(got.map((r) => [r.index, r.prompt, r.input, r.status]), plan.prompts.map((p, i) => [i, p.prompt, p.input, 'ok']));
          assert.deepEqual(leftovers(dir), []);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('closing a big results file', () => {
  it('gives the event loop way while it orders and checks the rows (an extension host serves others meanwhile), and ends with every row in order', async () => {
    const dir = scratch();
    try {
      const path = join(dir, 'big.jsonl');
      const writer = new OrderedJsonlWriter({ path });
      const n = 40_000; // ~7 MB: more than one megabyte copied and one 4 MiB chunk read back
      const p = (i: number): PromptInput => ({ prompt: `question ${i}`, input: {} });
      for (let i = n - 1; i >= 0; i--) writer.add(result(i, p(i), 'ok', `answer ${i} ${'x'.repeat(120)}`));
      let turns = 0;
      let closed = false;
      const spin = () => {
        turns++;
        if (!closed) setImmediate(spin);
      };
      setImmediate(spin);
      const closing = writer.close(n).finally(() => (closed = true));
      const turnsAtStart = turns;
      assert.equal(await closing, n);
      // Before, the whole close ran in one turn: nothing else ran until it was over.
      assert.ok(turns - turnsAtStart >= 3, `the event loop turned ${turns - turnsAtStart} times during the close`);
      const got = lines(path);
      assert.equal(got.length, n);
      got.forEach((l, i) => assert.ok(l.startsWith(`{"index":${i},`), `row ${i} in its place`));
      assert.deepEqual(leftovers(dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a results file whose disk changes under the run', () => {
  const rows = (writer: OrderedJsonlWriter, n: number) => {
    for (let i = n - 1; i >= 0; i--) writer.add(result(i, { prompt: `p${i}` }, 'ok', `answer ${i}`));
  };

  it('its .partial file deleted mid-run: every row is still written, from the open file', async () => {
    const dir = scratch();
    try {
      const path = join(dir, 'out.jsonl');
      const writer = new OrderedJsonlWriter({ path });
      rows(writer, 50);
      await new Promise((r) => setImmediate(r)); // flushed
      rmSync(`${path}.partial`);
      assert.equal(await writer.close(50), 50);
      assert.deepEqual(lines(path).map((l) => (JSON.parse(l) as PromptResult).text), Array.from({ length: 50 }, (_, i) => `answer ${i}`));
      assert.deepEqual(leftovers(dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('its folder removed mid-run: an error that says the folder is gone and that no rows were kept', async () => {
    const dir = scratch();
    try {
      const folder = join(dir, 'runs');
      mkdirSync(folder);
      const writer = new OrderedJsonlWriter({ path: join(folder, 'out.jsonl') });
      rows(writer, 50);
      await new Promise((r) => setImmediate(r));
      rmSync(folder, { recursive: true });
      await assert.rejects(writer.close(50), (err: Error) => err instanceof ResultsFileError && /folder .*runs no longer exists; no rows kept; 50 rows not written/.test(err.message) && err.kept === 0);
      assert.ok(!existsSync(folder));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const disk = smallDisk(128);

describe('a full disk (a 128 KiB tmpfs)', { skip: disk.skip }, () => {
  after(() => disk.remove());
  const big = (i: number) => result(i, { prompt: `p${i}` }, 'ok', `${i} `.padEnd(1000, 'x'));

  it('mid-run: the rows written stay whole in the .partial file, the error says how many; the rest are counted, not written', async () => {
    const path = join(disk.dir, 'out.jsonl');
    let told: ResultsFileError | undefined;
    const writer = new OrderedJsonlWriter({ path, onFailure: (err) => (told = err) });
    for (let i = 0; i < 300; i++) {
      writer.add(big(i));
      if (i % 10 === 9) await new Promise((r) => setImmediate(r));
    }
    await assert.rejects(writer.close(300), (err: Error) => err instanceof ResultsFileError && /ENOSPC: no space left on device; kept \d+ rows/.test(err.message));
    assert.ok(told, 'told when the write failed');
    const kept = lines(`${path}.partial`).map((l) => JSON.parse(l) as PromptResult);
    assert.ok(kept.length > 0 && kept.length < 300);
    assert.equal(kept.length, told!.kept);
    assert.equal(readFileSync(`${path}.partial`, 'utf8').at(-1), '\n', 'no torn row');
    assert.deepEqual(readdirSync(disk.dir).filter((f) => !f.endsWith('.partial')), []);
    rmSync(`${path}.partial`);
  });

  it('putting the rows in order: no stale .sorting file, every row kept in the .partial file', async () => {
    const path = join(disk.dir, 'out.jsonl');
    const writer = new OrderedJsonlWriter({ path });
    for (let i = 79; i >= 0; i--) writer.add(big(i)); // out of order: it must be sorted, and 2 × 80 KB do not fit
    await assert.rejects(writer.close(80), (err: Error) => err instanceof ResultsFileError && /in input order: ENOSPC.*kept 80 rows/.test(err.message));
    assert.deepEqual(readdirSync(disk.dir), ['out.jsonl.partial']);
    assert.equal(lines(`${path}.partial`).length, 80);
    rmSync(`${path}.partial`);
  });
});

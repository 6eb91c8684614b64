/**
 * Every bad input the built `swarm` CLI meets: one clear line (or a capped list), exit 2, no stack
 * trace, nothing sent and nothing overwritten.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, finished, killAll, requestCounts, runCli, spawnCli, startSim, tempDir, writeText, type CliResult, type Sim } from './helpers/cli.ts';
import { patience } from './helpers/patience.ts';

const shown = (r: CliResult) => `exit ${r.code ?? r.signal}\n--- stderr ---\n${r.stderr.slice(0, 2000)}`;

/** Exit 2 with exactly `lines` lines on stderr, none of them a stack frame, nothing on stdout. */
function badInput(r: CliResult, pattern: RegExp, lines = 1): void {
  assert.equal(r.code, 2, shown(r));
  assert.equal(r.stderr.trimEnd().split('\n').length, lines, shown(r));
  assert.match(r.stderr, pattern);
  assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
  assert.equal(r.stdout, '');
}

describe('bad input: one clear line, exit 2', { concurrency: 4, timeout: patience(60_000) }, () => {
  let dir = '';
  let cleanup: () => Promise<void>;
  let sim: Sim;
  let prompts = '';
  const scatter = (...args: string[]) => runCli(['scatter', '--hostfile', sim.hostfile, ...args]);

  before(async () => {
    ensureBuilt();
    ({ dir, cleanup } = await tempDir());
    sim = await startSim(dir, 'sim.hostfile', 2);
    prompts = await writeText(dir, 'prompts.txt', 'one\ntwo\n');
  });
  after(async () => {
    await sim.stop();
    await killAll();
    await cleanup();
  });

  it('--out in a folder that does not exist, --out naming the prompt file, --out a folder', async () => {
    badInput(await scatter('--prompts', prompts, '--out', join(dir, 'nope', 'r.jsonl')), /--out .*nope\/r\.jsonl: folder .*nope does not exist/);
    badInput(await scatter('--prompts', prompts, '--out', prompts), /--out .* is the --prompts file; refusing to overwrite an input/);
    assert.equal(await readFile(prompts, 'utf8'), 'one\ntwo\n', 'the input is untouched');
    badInput(await scatter('--prompts', prompts, '--out', dir), /is a folder/);
  });

  it('binary, compressed, NUL-holding and non-UTF-8 prompt files are refused, naming file:line; nothing is sent', async () => {
    const before = await Promise.all(sim.endpoints.map(requestCounts));
    const gz = join(dir, 'prompts.gz');
    await writeFile(gz, gzipSync(Buffer.from('a\nb\n'.repeat(500))));
    const nul = await writeText(dir, 'nul.txt', 'fine\nstill fine\nbad \0 byte\n');
    const latin1 = join(dir, 'latin1.txt');
    await writeFile(latin1, Buffer.from('caf\xe9 ok?\n', 'latin1'));
    badInput(await scatter('--prompts', gz), /prompts\.gz:1: holds a NUL byte.*gzip/);
    badInput(await scatter('--prompts', nul), /nul\.txt:3: holds a NUL byte/);
    badInput(await scatter('--prompts', latin1), /latin1\.txt:1: is not valid UTF-8/);
    const after = await Promise.all(sim.endpoints.map(requestCounts));
    assert.deepEqual(after, before, 'no request reached the swarm');
  });

  it('an unserved model is one line, exit 2, and no result rows', async () => {
    badInput(await scatter('--prompts', prompts, '--model', 'nosuch'), /no endpoint serves model "nosuch"; served: sim-model/);
  });

  it('option errors: the error, one usage line, a pointer to --help; sane bounds', async () => {
    const r = await scatter('--prompts', prompts, '--concurrency', '0');
    badInput(r, /--concurrency must be an integer from 1 to 100,000/, 3);
    assert.match(r.stderr, /^usage: swarm scatter --hostfile FILE --prompts FILE \[options\]$/m);
    assert.match(r.stderr, /^\(see swarm scatter --help\)$/m);
    for (const [flag, value] of [['--max-tokens', '1e99'], ['--seed', '1.5'], ['--timeout', 'inf'], ['--temperature', '2.5'], ['--top-p', '0'], ['-n', '16385']]) {
      const bad = await scatter('--prompts', prompts, flag!, value!);
      badInput(bad, new RegExp(flag!), 3);
      assert.doesNotMatch(bad.stderr, /9007199254740991|Infinity/);
    }
    // vLLM's limits, the same ones the panel's form and the host apply (core/requests/generation-params.ts).
    badInput(await scatter('--prompts', prompts, '--temperature', '3'), /--temperature must be a number from 0 to 2/, 3);
    badInput(await scatter('--prompts', prompts, '--temperature', '0', '-n', '2'), /n must be 1 when temperature is 0/);
  });

  it('error lists are capped and control characters escaped', async () => {
    const junk = await writeText(dir, 'junk.hostfile', `${'x '.repeat(1_000_000)}\n${Array.from({ length: 100 }, (_, i) => `h${i}\t0`).join('\n')}\n`);
    const hosts = await scatter('--prompts', prompts, '--hostfile', junk);
    badInput(hosts, /^… and 86 more$/m, 21);
    assert.match(hosts.stderr, /junk\.hostfile:1: … and 999,99\d more problems on this line/);

    const jsonl = await writeText(dir, 'noprompt.jsonl', '{"question": "no prompt field"}\n'.repeat(100_000));
    badInput(await scatter('--prompts', jsonl), /^… and 99,980 more$/m, 21);

    const esc = await scatter('--prompts', prompts, '--tag', 'role=\x1b[31mred');
    badInput(esc, /role=\\x1b\[31mred/);
    assert.doesNotMatch(esc.stderr, /\x1b/);
  });

  it('stdout closed early (| head -1): the run stops quietly, no stack trace', async () => {
    // Its own servers: the other tests here count the requests theirs receive.
    const own = await startSim(dir, 'epipe.hostfile', 2);
    try {
      const many = await writeText(dir, 'many.txt', Array.from({ length: 5_000 }, (_, i) => `prompt ${i}`).join('\n'));
      const child = spawnCli(['scatter', '--hostfile', own.hostfile, '--prompts', many, '--no-batch', '--quiet']);
      child.stdout!.once('data', () => child.stdout!.destroy()); // the reader goes away after the first chunk
      const r = await finished(child, 'scatter | head -1', 30_000);
      assert.ok(r.code === 0 || r.code === 1, shown(r));
      assert.doesNotMatch(r.stderr, /EPIPE|^\s+at /m, shown(r));
    } finally {
      await own.stop();
    }
  });

  it('swarm sim exits 2 at once when it cannot write its hostfile, leaving no server running', async () => {
    const r = await runCli(['sim', '--endpoints', '2', '--hostfile', join(dir, 'missing', 'sim.hostfile')], { timeoutMs: 10_000 });
    badInput(r, /--hostfile .*missing\/sim\.hostfile: folder .*missing does not exist/);
    await mkdir(join(dir, 'taken.hostfile'));
    badInput(await runCli(['sim', '--endpoints', '1', '--hostfile', join(dir, 'taken.hostfile')], { timeoutMs: 10_000 }), /is a folder/);
  });

  it('a folder as the prompt file is named as unreadable', async () => {
    badInput(await scatter('--prompts', dir), /cannot read prompts .*EISDIR/);
  });
});

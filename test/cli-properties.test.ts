/**
 * Properties of the built `swarm` CLI over random input: whatever the arguments or the prompt file
 * (random bytes, huge lines, invalid UTF-8), no stack trace reaches the user, the exit code is one
 * of 0, 1, 2, 130, and stderr stays bounded.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { runCli, suiteSim, type CliResult } from './helpers/cli.ts';
import { patience } from './helpers/patience.ts';

const STDERR_BOUND = 16 * 1024;

function wellBehaved(r: CliResult, what: string): void {
  const context = `${what}\nexit ${r.code ?? r.signal}\n${r.stderr.slice(0, 1500)}`;
  assert.ok([0, 1, 2, 130].includes(r.code ?? -1), context);
  assert.doesNotMatch(r.stderr, /^\s+at \S+.*[:(]\d+:\d+\)?$/m, `a stack trace: ${context}`);
  assert.ok(r.stderr.length < STDERR_BOUND, `stderr of ${r.stderr.length.toLocaleString('en-US')} bytes: ${context}`);
}

/** Values a user (or a fuzzer) might pass: numbers at the edges, empty, option look-alikes, control characters. */
const value = fc.oneof(
  fc.constantFrom('0', '-1', '1', '1.5', '1e9', '1e999', 'NaN', 'Infinity', '', ' ', '9007199254740993', '--help', '-', 'a=b', '=', 'role=chat', '\x1b[2J', '\r'),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
).map((v) => v.replace(/\0/g, '')); // argv cannot carry NUL

const FLAGS = ['--concurrency', '--timeout', '--max-tokens', '--temperature', '--top-p', '--seed', '-n', '--param', '--tag', '--model', '--stop', '--attempts',
  '--max-num-seqs', '--timeout-per-sequence', '--tunnel-mode', '--socks', '--ssh-option', '--reconnect-timeout', '--bogus'];

describe('swarm CLI properties', { timeout: patience(300_000) }, () => {
  const suite = suiteSim('sim.hostfile', 2);

  it('random options to scatter: exit 0/1/2/130, no stack trace, bounded stderr', async () => {
    const prompts = join(suite.dir, 'p.txt');
    await writeFile(prompts, 'one\ntwo\nthree\n');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...FLAGS), value), { maxLength: 4 }), async (pairs) => {
        const args = ['scatter', '--hostfile', suite.sim.hostfile, '--prompts', prompts, '--quiet', ...pairs.flat()];
        wellBehaved(await runCli(args, { timeoutMs: 30_000 }), JSON.stringify(pairs));
      }),
      { numRuns: 10 },
    );
  });

  it('random prompt files (random bytes, huge lines, invalid UTF-8, JSONL junk): exit 0/1/2, no stack trace, bounded stderr', async () => {
    const file = fc.oneof(
      fc.uint8Array({ maxLength: 4096 }).map((b) => Buffer.from(b)),
      fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.integer({ min: 100_000, max: 1_000_000 })).map(([s, n]) => Buffer.from(s.replace(/[\n\r]/g, 'x').repeat(Math.ceil(n / s.length)))),
      fc.array(fc.constantFrom('ok\n', '\xff\xfe', '\xc3', '\n', '\0', '{"prompt": 1}\n', '{"x": "y"}\n', '{broken\n', '\x1b[31m'), { maxLength: 200 }).map((parts) => Buffer.from(parts.join(''), 'latin1')),
    );
    await fc.assert(
      fc.asyncProperty(file, fc.boolean(), async (bytes, jsonl) => {
        const path = join(suite.dir, jsonl ? 'prompts.jsonl' : 'prompts.txt');
        await writeFile(path, bytes);
        const r = await runCli(['scatter', '--hostfile', suite.sim.hostfile, '--prompts', path, '--max-tokens', '4', '--quiet'], { timeoutMs: 60_000 });
        wellBehaved(r, `${bytes.length} bytes, ${jsonl ? 'jsonl' : 'text'}: ${JSON.stringify(bytes.subarray(0, 60).toString('latin1'))}`);
        assert.notEqual(r.code, 130);
      }),
      { numRuns: 10 },
    );
  });
});

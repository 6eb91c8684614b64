/**
 * End-to-end tests of the built `swarm` CLI (`node bin/swarm.js …` as child processes), over real
 * loopback HTTP against `swarm sim` child processes. Request counts are checked from outside,
 * through each sim server's `GET /metrics`.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import {
  closedPort,
  ensureBuilt,
  finished,
  jsonLines,
  killAll,
  requestCounts,
  runCli,
  spawnCli,
  startSim,
  tempDir,
  waitFor,
  writeText,
  type CliResult,
  type Sim,
} from './helpers/cli.ts';
import { patience } from './helpers/patience.ts';

interface Scenario {
  dir: string;
  sim(name: string, endpoints: number, flags?: string[], env?: Record<string, string>): Promise<Sim>;
  file(name: string, text: string): Promise<string>;
}

/** A temp dir and sims that are stopped (and the dir removed) whatever the test did. */
async function scenario(fn: (s: Scenario) => Promise<void>): Promise<void> {
  const { dir, cleanup } = await tempDir();
  const sims: Sim[] = [];
  try {
    await fn({
      dir,
      sim: async (name, endpoints, flags = [], env = {}) => {
        const sim = await startSim(dir, name, endpoints, flags, env);
        sims.push(sim);
        return sim;
      },
      file: (name, text) => writeText(dir, name, text),
    });
  } finally {
    await Promise.all(sims.map((s) => s.stop()));
    await cleanup();
  }
}

/** Context for assertion messages: what the CLI printed. */
function shown(r: CliResult): string {
  return `exit ${r.code ?? r.signal}\n--- stdout ---\n${r.stdout.slice(0, 3000)}\n--- stderr ---\n${r.stderr.slice(0, 3000)}`;
}

const RESULT_KEYS = [
  'index',
  'status',
  'ok',
  'text',
  'reasoning',
  'error',
  'endpoint',
  'finishReason',
  'promptTokens',
  'completionTokens',
  'attempts',
  'timings',
  'input',
];

/** Every field of the result contract is present with its type. */
function assertResultShape(r: Record<string, any>): void {
  for (const key of RESULT_KEYS) assert.ok(key in r, `result ${JSON.stringify(r)} lacks "${key}"`);
  assert.equal(typeof r.index, 'number');
  assert.ok(['ok', 'failed', 'cancelled'].includes(r.status), `status ${r.status}`);
  assert.equal(r.ok, r.status === 'ok');
  assert.equal(typeof r.text, 'string');
  assert.equal(typeof r.attempts, 'number');
  assert.equal(typeof r.input, 'object');
  assert.ok(r.input !== null && !Array.isArray(r.input));
  for (const k of ['queuedMs', 'sentMs', 'firstByteMs', 'doneMs']) assert.ok(k in r.timings, `timings lacks ${k}`);
  assert.equal(typeof r.timings.queuedMs, 'number');
  assert.equal(typeof r.timings.doneMs, 'number');
}

/** One ok result per prompt, in input order, each answering its own prompt (the simulator echoes). */
function assertEchoedInOrder(results: Array<Record<string, any>>, prompts: readonly string[]): void {
  assert.equal(results.length, prompts.length);
  results.forEach((res, i) => {
    assert.equal(res.index, i);
    assert.equal(res.status, 'ok', JSON.stringify(res));
    assert.equal(res.text, `completion: ${prompts[i]}`, `prompt ${i} gets its own answer`);
  });
}

function numbered(count: number, label = 'question'): string[] {
  return Array.from({ length: count }, (_, i) => `${label} ${i}: what is ${i} squared?`);
}

const SWARM_FLAGS_IN_CONTRACT = ['--hostfile', '--model', '--tag', '--concurrency'];

before(() => ensureBuilt());
after(() => killAll());

// The timeout only guards against a hang: on 2 busy cores beside the other suites this takes a minute.
describe('swarm CLI end to end', { concurrency: 4, timeout: patience(180_000) }, () => {
  it('sim writes its hostfile; scatter (batched) answers every prompt in order, one completions POST per endpoint', async () => {
    await scenario(async (s) => {
      const sim = await s.sim('hosts', 3);
      assert.match(sim.ready, /ready/);
      assert.equal(sim.lines.length, 3);
      for (const line of sim.lines) assert.match(line, /^127\.0\.0\.1\t\d{1,5}$/);
      assert.equal(new Set(sim.endpoints).size, 3, 'distinct ports');

      const prompts = numbered(10);
      // Blank and whitespace-only lines between prompts: `index` counts prompts, not lines.
      const text = '\n' + prompts.map((p, i) => (i % 3 === 1 ? `${p}\n\n \t \n` : `${p}\n`)).join('') + '\n';
      const promptsFile = await s.file('prompts.txt', text);

      const r = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--batch', '--quiet']);
      assert.equal(r.code, 0, shown(r));
      const results = jsonLines(r.stdout);
      assert.equal(results.length, 10, shown(r));
      results.forEach((res, i) => {
        assertResultShape(res);
        assert.equal(res.index, i);
        assert.equal(res.status, 'ok', JSON.stringify(res));
        assert.equal(res.ok, true);
        assert.equal(res.text, `completion: ${prompts[i]}`);
        assert.equal(res.error, null);
        assert.equal(res.endpoint, sim.endpoints[i % 3], `prompt ${i} goes to endpoint ${i % 3}`);
        assert.deepEqual(res.input, {});
        assert.equal(res.attempts, 1);
      });

      for (const ep of sim.endpoints) {
        const c = await requestCounts(ep);
        assert.equal(c.completions2xx, 1, `${ep}: one batched POST /v1/completions`);
        assert.equal(c.completionsAll, 1, `${ep}: no rejected or retried completions POST`);
        assert.equal(c.chatAll, 0, `${ep}: no chat POST in batch mode`);
      }

      await sim.stop();
      assert.equal(sim.child.exitCode, 143, 'sim stops cleanly on SIGTERM, with its code');
    });
  });

  it('scatter --no-batch sends one chat POST per prompt (4, 3, 3) and writes --out, nothing on stdout', async () => {
    await scenario(async (s) => {
      const sim = await s.sim('hosts', 3);
      const prompts = numbered(10);
      const promptsFile = await s.file('prompts.txt', prompts.map((p) => `${p}\n\n`).join(''));
      const out = `${s.dir}/results.jsonl`;

      const r = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--no-batch', '--out', out, '--quiet']);
      assert.equal(r.code, 0, shown(r));
      assert.equal(r.stdout, '', 'results go to --out only');
      const results = jsonLines(await readFile(out, 'utf8'));
      assert.equal(results.length, 10);
      results.forEach((res, i) => {
        assertResultShape(res);
        assert.equal(res.index, i);
        assert.equal(res.status, 'ok', JSON.stringify(res));
        assert.equal(res.text, `completion: ${prompts[i]}`);
        assert.equal(res.endpoint, sim.endpoints[i % 3]);
      });

      const counts = await Promise.all(sim.endpoints.map(requestCounts));
      assert.deepEqual(
        counts.map((c) => c.chat2xx),
        [4, 3, 3],
        'chat POSTs per endpoint',
      );
      assert.deepEqual(
        counts.map((c) => c.chatAll),
        [4, 3, 3],
        'no rejected or retried chat POSTs',
      );
      assert.deepEqual(
        counts.map((c) => c.completionsAll),
        [0, 0, 0],
        'no completions POST in individual mode',
      );
    });
  });

  it('JSONL prompts: extra fields (even "text", "index", "ok", "input") land under `input` untouched', async () => {
    await scenario(async (s) => {
      const sim = await s.sim('hosts', 2);
      const rows = [
        { prompt: 'first', text: 'NOT THE ANSWER', index: 99, id: 'a-1' },
        { prompt: 'second', ok: false, status: 'failed', error: 'nope', endpoint: 'evil:1', input: { nested: [1, 2] }, timings: null },
        { prompt: 'third' },
      ];
      const promptsFile = await s.file('prompts.jsonl', `${JSON.stringify(rows[0])}\n\n${JSON.stringify(rows[1])}\n${JSON.stringify(rows[2])}\n`);
      for (const mode of ['--batch', '--no-batch']) {
        const r = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, mode, '--quiet']);
        assert.equal(r.code, 0, shown(r));
        const results = jsonLines(r.stdout);
        assert.equal(results.length, 3);
        results.forEach((res, i) => {
          assertResultShape(res);
          const { prompt, ...rest } = rows[i]!;
          assert.equal(res.index, i, `${mode}: index`);
          assert.equal(res.status, 'ok', `${mode}: status`);
          assert.equal(res.ok, true);
          assert.equal(res.error, null);
          assert.equal(res.text, `completion: ${prompt}`, `${mode}: text is the answer, not the input field`);
          assert.equal(res.endpoint, sim.endpoints[i % 2]);
          assert.notEqual(res.timings, null);
          assert.deepEqual(res.input, rest, `${mode}: input carries the other fields untouched`);
        });
      }
    });
  });

  it('batched groups above the server prompt cap (--max-prompts 4) are split: 10 prompts → 3 successful POSTs', async () => {
    await scenario(async (s) => {
      const sim = await s.sim('hosts', 1, ['--max-prompts', '4']);
      const prompts = numbered(10);
      const promptsFile = await s.file('prompts.txt', prompts.join('\n'));
      const r = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--quiet']);
      assert.equal(r.code, 0, shown(r));
      assertEchoedInOrder(jsonLines(r.stdout), prompts);
      const c = await requestCounts(sim.endpoints[0]!);
      assert.equal(c.completions2xx, 3, 'ceil(10 / 4) accepted completions POSTs');
      // vLLM does not advertise its cap: at most one rejected list may teach it to the client.
      assert.ok(c.completionsAll - c.completions2xx <= 1, `rejected completions POSTs: ${c.completionsAll - c.completions2xx}`);
      assert.equal(c.chatAll, 0);
    });
  });

  it('batched results still match their prompts when the server returns choices out of order (--shuffle-choices)', async () => {
    await scenario(async (s) => {
      const sim = await s.sim('hosts', 2, ['--shuffle-choices']);
      // Precondition: the server really does reorder choices, else this test proves nothing.
      const probe = await fetch(`http://${sim.endpoints[0]}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-model', prompt: ['a', 'b', 'c', 'd'], max_tokens: 8 }),
      });
      const order = ((await probe.json()) as { choices: Array<{ index: number }> }).choices.map((c) => c.index);
      assert.notDeepEqual(order, [0, 1, 2, 3], 'sim --shuffle-choices reorders choices');

      const prompts = numbered(30, 'shuffled');
      const promptsFile = await s.file('prompts.txt', prompts.join('\n'));
      const r = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--quiet']);
      assert.equal(r.code, 0, shown(r));
      const results = jsonLines(r.stdout);
      assertEchoedInOrder(results, prompts);
      results.forEach((res, i) => assert.equal(res.endpoint, sim.endpoints[i % 2]));
    });
  });

  it('server errors: exit 1, every result failed with the server message (nested and flat error bodies), 4xx not retried', async () => {
    await scenario(async (s) => {
      const prompts = numbered(6);
      const promptsFile = await s.file('prompts.txt', prompts.join('\n'));
      const nested = await s.sim('nested', 2, ['--fault-rate', '1', '--fault-status', '400']);
      const flat = await s.sim('flat', 2, ['--fault-rate', '1', '--fault-status', '400', '--error-format', 'flat']);
      const cases: Array<[Sim, string]> = [
        [nested, '--batch'],
        [flat, '--batch'],
        [flat, '--no-batch'],
      ];
      for (const [sim, mode] of cases) {
        const r = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, mode, '--quiet']);
        const what = `${sim === nested ? 'nested' : 'flat'} ${mode}`;
        assert.equal(r.code, 1, `${what}\n${shown(r)}`);
        const results = jsonLines(r.stdout);
        assert.equal(results.length, 6, what);
        results.forEach((res, i) => {
          assertResultShape(res);
          assert.equal(res.index, i);
          assert.equal(res.status, 'failed', what);
          assert.equal(res.ok, false);
          assert.equal(res.text, '');
          assert.equal(typeof res.error, 'string');
          assert.match(res.error, /400/, `${what}: error names the status`);
          assert.match(res.error, /Simulated fault/, `${what}: error carries the server's message, got ${JSON.stringify(res.error)}`);
          assert.equal(res.endpoint, sim.endpoints[i % 2]);
        });
      }
      for (const ep of nested.endpoints) {
        const c = await requestCounts(ep);
        // Bisected once: both halves rejected alike means the request, not one prompt, is at fault.
        assert.equal(c.completionsAll, 3, `${ep}: a 400 is not retried`);
        assert.equal(c.completions2xx, 0);
      }
      for (const ep of flat.endpoints) {
        const c = await requestCounts(ep);
        assert.equal(c.completionsAll, 3, `${ep}: a 400 is not retried (batched, bisected once)`);
        assert.equal(c.chatAll, 3, `${ep}: a 400 is not retried (individual)`);
      }
    });
  });

  it('failover: the prompts of an endpoint that resets every connection are re-sent to the live one', async () => {
    await scenario(async (s) => {
      const dead = await s.sim('dead', 1, ['--die-after', '0']);
      const live = await s.sim('live', 1);
      const hostfile = await s.file('mixed', `${dead.lines[0]}\n${live.lines[0]}\n`);
      const prompts = numbered(10);
      const promptsFile = await s.file('prompts.txt', prompts.join('\n'));
      // --attempts 2 keeps the backoff on the dead endpoint short (one retry, then fail over).
      const r = await runCli(['scatter', '--hostfile', hostfile, '--prompts', promptsFile, '--attempts', '2', '--quiet'], { timeoutMs: 30_000 });
      assert.equal(r.code, 0, shown(r));
      const results = jsonLines(r.stdout);
      assert.equal(results.length, 10);
      results.forEach((res, i) => {
        assert.equal(res.index, i);
        assert.equal(res.status, 'ok', JSON.stringify(res));
        assert.equal(res.text, `completion: ${prompts[i]}`);
        assert.equal(res.endpoint, live.endpoints[0], `prompt ${i} names the endpoint that answered`);
        if (i % 2 === 0) assert.ok(res.attempts > 1, `prompt ${i} counts its attempts on the dead endpoint too (${res.attempts})`);
      });
      const c = await requestCounts(live.endpoints[0]!);
      assert.equal(c.completions2xx, 2, 'live endpoint: its own group plus the dead one’s');
    });
  });

  it('Ctrl-C: exit 130, --out holds every prompt in order, finished ones ok and the rest cancelled', async () => {
    await scenario(async (s) => {
      const live = await s.sim('live', 1);
      const hang = await s.sim('hang', 1, ['--hang']);
      const hostfile = await s.file('mixed', `${live.lines[0]}\n${hang.lines[0]}\n`);
      const prompts = numbered(20);
      const promptsFile = await s.file('prompts.txt', prompts.join('\n'));
      const out = `${s.dir}/results.jsonl`;

      const child = spawnCli(['scatter', '--hostfile', hostfile, '--prompts', promptsFile, '--no-batch', '--out', out]);
      const done = finished(child, 'interrupted scatter', 20_000);
      let earlyRows: Array<Record<string, any>> = [];
      try {
        // Rows reach the disk (the run's .partial file) as they finish: the live endpoint's answers, while the other's hang.
        const early = await waitFor(
          async () => {
            const text = await readFile(`${out}.partial`, 'utf8').catch(() => '');
            return text.includes('\n') ? text : undefined;
          },
          15_000,
          'the first result line in --out',
        );
        earlyRows = jsonLines(early);
        for (const row of earlyRows) {
          assert.equal(row.status, 'ok');
          assert.equal(row.text, `completion: ${prompts[row.index]}`, 'a row on disk is whole and its own');
        }
      } finally {
        child.kill('SIGINT');
      }
      const r = await done;
      assert.equal(r.code, 130, shown(r));
      assert.equal(r.stdout, '');
      const results = jsonLines(await readFile(out, 'utf8'));
      assert.equal(results.length, 20, 'every prompt has a line');
      let ok = 0;
      results.forEach((res, i) => {
        assertResultShape(res);
        assert.equal(res.index, i);
        assert.ok(res.status === 'ok' || res.status === 'cancelled', `prompt ${i}: ${res.status} ${res.error}`);
        if (res.status === 'ok') {
          ok++;
          assert.equal(res.text, `completion: ${prompts[i]}`);
          assert.equal(res.endpoint, live.endpoints[0]);
        } else {
          assert.equal(res.ok, false);
        }
      });
      // Rows on disk before the Ctrl-C are kept as they were (the hanging endpoint's prompts answered only by hedges on the live one).
      for (const row of earlyRows) assert.equal(results[row.index]!.status, 'ok', `prompt ${row.index} was finished before the Ctrl-C`);
      assert.ok(ok >= 1);
    });
  });

  it('bad hostfile: scatter, health and reduce exit 2 and print every FILE:LINE error', async () => {
    await scenario(async (s) => {
      const hostfile = await s.file(
        'bad-hosts',
        [
          '# a comment', //                 1
          '127.0.0.1\t8000', //             2 fine
          '127.0.0.1\t99999', //            3 port out of range
          'node-a\tnotaport\tx', //         4 neither port nor tag
          '', //                            5
          '[::1\t80', //                    6 broken IPv6
          '127.0.0.1\t8001\trole', //       7 tag without =
        ].join('\n') + '\n',
      );
      const promptsFile = await s.file('prompts.txt', 'hello\n');
      const runs: Array<[string, string[]]> = [
        ['scatter', ['scatter', '--hostfile', hostfile, '--prompts', promptsFile, '--quiet']],
        ['health', ['health', '--hostfile', hostfile]],
        ['reduce', ['reduce', '--hostfile', hostfile, '--prompt', 'p', '--reduce-prompt', 'merge {responses}', '--quiet']],
      ];
      const results = await Promise.all(runs.map(([, args]) => runCli(args)));
      results.forEach((r, k) => {
        const name = runs[k]![0];
        assert.equal(r.code, 2, `${name}\n${shown(r)}`);
        for (const line of [3, 4, 6, 7]) assert.ok(r.stderr.includes(`${hostfile}:${line}:`), `${name}: stderr names ${hostfile}:${line}:\n${shown(r)}`);
        for (const line of [1, 2, 5]) assert.ok(!r.stderr.includes(`${hostfile}:${line}:`), `${name}: line ${line} is fine`);
        assert.equal(r.stdout.trim(), '', `${name}: nothing on stdout`);
      });
    });
  });

  it('bad prompt files and options: exit 2 naming the file, line or option', async () => {
    await scenario(async (s) => {
      const port = await closedPort();
      const hostfile = await s.file('hosts', `127.0.0.1\t${port}\n`);
      const missing = `${s.dir}/no-such-prompts.txt`;
      const badJsonl = await s.file('bad.jsonl', ['{"prompt": "ok"}', '{"prompt": "broken"', '{"prompt": "fine"}', '{"question": "no prompt field"}'].join('\n'));
      const good = await s.file('prompts.txt', 'hello\n');

      const [missingRun, jsonlRun, unknownRun, badNumber, unknownTop, unknownHealth, unknownReduce, unknownSim] = await Promise.all([
        runCli(['scatter', '--hostfile', hostfile, '--prompts', missing, '--quiet']),
        runCli(['scatter', '--hostfile', hostfile, '--prompts', badJsonl, '--quiet']),
        runCli(['scatter', '--hostfile', hostfile, '--prompts', good, '--no-such-option']),
        runCli(['scatter', '--hostfile', hostfile, '--prompts', good, '--concurrency', '0']),
        runCli(['--no-such-option']),
        runCli(['health', '--hostfile', hostfile, '--no-such-option']),
        runCli(['reduce', '--hostfile', hostfile, '--prompt', 'p', '--reduce-prompt', '{responses}', '--no-such-option']),
        runCli(['sim', '--endpoints', '1', '--no-such-option']),
      ]);
      assert.equal(missingRun.code, 2, shown(missingRun));
      assert.ok(missingRun.stderr.includes(missing), `names the missing file\n${shown(missingRun)}`);
      assert.equal(missingRun.stdout, '');

      assert.equal(jsonlRun.code, 2, shown(jsonlRun));
      assert.ok(jsonlRun.stderr.includes(`${badJsonl}:2`), `names ${badJsonl}:2\n${shown(jsonlRun)}`);
      assert.ok(jsonlRun.stderr.includes(`${badJsonl}:4`), `names ${badJsonl}:4 (no "prompt")\n${shown(jsonlRun)}`);
      assert.ok(!jsonlRun.stderr.includes(`${badJsonl}:1`), 'line 1 is fine');
      assert.equal(jsonlRun.stdout, '');

      for (const r of [unknownRun, unknownTop, unknownHealth, unknownReduce, unknownSim]) {
        assert.equal(r.code, 2, shown(r));
        assert.match(r.stderr, /--no-such-option/);
      }
      assert.equal(badNumber.code, 2, shown(badNumber));
      assert.match(badNumber.stderr, /--concurrency/);
    });
  });

  it('--model selection and --tag filtering over a mixed swarm', async () => {
    await scenario(async (s) => {
      const alpha = await s.sim('alpha', 1, ['--model', 'alpha']);
      const beta = await s.sim('beta', 1, ['--model', 'beta']);
      const hostfile = await s.file('mixed', `${alpha.lines[0]}\tpool=a\n${beta.lines[0]}\tpool=b\n`);
      const [a, b] = [alpha.endpoints[0]!, beta.endpoints[0]!];
      const prompts = numbered(6);
      const promptsFile = await s.file('prompts.txt', prompts.join('\n'));

      // No --model: the first endpoint's model; the other endpoint is left out with a warning naming it.
      const r = await runCli(['scatter', '--hostfile', hostfile, '--prompts', promptsFile]);
      assert.equal(r.code, 0, shown(r));
      const results = jsonLines(r.stdout);
      assert.equal(results.length, 6);
      results.forEach((res, i) => {
        assert.equal(res.status, 'ok');
        assert.equal(res.text, `completion: ${prompts[i]}`);
        assert.equal(res.endpoint, a, 'only the endpoint serving the first model answers');
      });
      const warning = r.stderr.split('\n').find((l) => l.includes(b));
      assert.ok(warning && /warn/i.test(warning) && /left out/i.test(warning), `stderr warns that ${b} is left out\n${shown(r)}`);
      const untouched = await requestCounts(b);
      assert.equal(untouched.completionsAll + untouched.chatAll, 0, 'nothing sent to the endpoint left out');

      // --model beta: the other way round, in individual mode.
      // (--quiet drops the bar and summary, never the warnings)
      const rb = await runCli(['scatter', '--hostfile', hostfile, '--prompts', promptsFile, '--model', 'beta', '--no-batch', '--quiet']);
      assert.equal(rb.code, 0, shown(rb));
      for (const res of jsonLines(rb.stdout)) assert.equal(res.endpoint, b);
      assert.ok(rb.stderr.split('\n').some((l) => l.includes(a) && /left out/i.test(l)), `warns that ${a} is left out\n${shown(rb)}`);

      // --model nope: bad input (exit 2), one line listing what is served; nothing generated, no rows.
      const rn = await runCli(['scatter', '--hostfile', hostfile, '--prompts', promptsFile, '--model', 'nope', '--quiet']);
      assert.equal(rn.code, 2, shown(rn));
      assert.equal(rn.stdout, '');
      assert.equal(rn.stderr.trim().split('\n').length, 1, shown(rn));
      assert.match(rn.stderr, /nope/);
      assert.match(rn.stderr, /alpha/);
      assert.match(rn.stderr, /beta/);

      // --tag pool=b picks the tagged endpoint (and its model).
      const rt = await runCli(['scatter', '--hostfile', hostfile, '--prompts', promptsFile, '--tag', 'pool=b', '--quiet']);
      assert.equal(rt.code, 0, shown(rt));
      const tagged = jsonLines(rt.stdout);
      assert.equal(tagged.length, 6);
      for (const res of tagged) {
        assert.equal(res.status, 'ok');
        assert.equal(res.endpoint, b);
      }

      // --tag role=none: no endpoint has it → bad input (exit 2), the message names the tag.
      const rnone = await runCli(['scatter', '--hostfile', hostfile, '--prompts', promptsFile, '--tag', 'role=none', '--quiet']);
      assert.equal(rnone.code, 2, shown(rnone));
      assert.match(rnone.stderr, /role=none/);

      for (const ep of [a, b]) {
        const c = await requestCounts(ep);
        assert.equal(c.completionsAll + c.chatAll, ep === a ? 1 : 7, `${ep}: generation POSTs over all runs`);
      }
    });
  });

  it('generation flags reach the server: --max-tokens, --param (JSON-typed), --system', async () => {
    await scenario(async (s) => {
      const sim = await s.sim('hosts', 1);
      const promptsFile = await s.file('prompts.txt', 'alpha beta gamma\ndelta epsilon\n');

      const capped = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--max-tokens', '2', '--temperature', '0.5', '--seed', '7', '--concurrency', '1', '--quiet']);
      assert.equal(capped.code, 0, shown(capped));
      assert.deepEqual(
        jsonLines(capped.stdout).map((r) => [r.text, r.finishReason]),
        [
          ['completion: alpha', 'length'],
          ['completion: delta', 'length'],
        ],
      );

      // echo=true must arrive as a JSON boolean (the server rejects the string "true"); raw batches echo the prompt as given.
      const echoed = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--param', 'echo=true', '--template', 'none', '--quiet']);
      assert.equal(echoed.code, 0, shown(echoed));
      assert.deepEqual(
        jsonLines(echoed.stdout).map((r) => r.text),
        ['alpha beta gammacompletion: alpha beta gamma', 'delta epsiloncompletion: delta epsilon'],
      );

      const system = 'S'.repeat(400);
      const batchedSystem = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--system', 'SYSTEM', '--template', 'none', '--quiet']);
      assert.equal(batchedSystem.code, 0, shown(batchedSystem));
      for (const r of jsonLines(batchedSystem.stdout)) assert.match(r.text, /^completion: SYSTEM\s/, 'raw batches prepend the system prompt');
      // Rendered by the server's template, the system prompt is a message of its own and the answer is the user's.
      const templatedSystem = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--system', 'SYSTEM', '--quiet']);
      assert.deepEqual(jsonLines(templatedSystem.stdout).map((r) => [r.text, r.template]), [['completion: alpha beta gamma', 'skeleton'], ['completion: delta epsilon', 'skeleton']]);

      const chatPlain = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--no-batch', '--quiet']);
      const chatSystem = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--no-batch', '--system', system, '--quiet']);
      assert.equal(chatSystem.code, 0, shown(chatSystem));
      const plainTokens = jsonLines(chatPlain.stdout).map((r) => r.promptTokens as number);
      const systemTokens = jsonLines(chatSystem.stdout).map((r) => r.promptTokens as number);
      systemTokens.forEach((t, i) => assert.ok(t >= plainTokens[i]! + 100, `chat request carries the system message (${t} vs ${plainTokens[i]} prompt tokens)`));

      // A field Swarm Lab sets itself cannot be overridden through --param.
      const clash = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--param', 'model=other', '--quiet']);
      assert.equal(clash.code, 2, shown(clash));
      assert.match(clash.stderr, /model/);
    });
  });

  it('SWARM_API_KEY is sent as a bearer token to a server started with VLLM_API_KEY', async () => {
    await scenario(async (s) => {
      const sim = await s.sim('hosts', 1, [], { VLLM_API_KEY: 'sekrit' });
      const promptsFile = await s.file('prompts.txt', 'hello\n');
      const without = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--quiet']);
      assert.equal(without.code, 1, shown(without));
      assert.match(without.stderr, /HTTP 401: Unauthorized/);
      const withKey = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', promptsFile, '--quiet'], { env: { SWARM_API_KEY: 'sekrit' } });
      assert.equal(withKey.code, 0, shown(withKey));
      assert.equal(jsonLines(withKey.stdout)[0]!.text, 'completion: hello');
      assert.ok(!withKey.stdout.includes('sekrit') && !withKey.stderr.includes('sekrit'), 'the key is never printed');
    });
  });

  it('health: exit 0 when all healthy, 1 for a closed port or a /health 503; --json lines parse', async () => {
    await scenario(async (s) => {
      const sim = await s.sim('hosts', 2);
      const sick = await s.sim('sick', 1, ['--health-status', '503']);
      const port = await closedPort();
      const withClosed = await s.file('with-closed', `${sim.lines.join('\n')}\n127.0.0.1\t${port}\n`);

      const [json, table, closed, unhealthy] = await Promise.all([
        runCli(['health', '--hostfile', sim.hostfile, '--json']),
        runCli(['health', '--hostfile', sim.hostfile]),
        runCli(['health', '--hostfile', withClosed, '--json', '--timeout', '5']),
        runCli(['health', '--hostfile', sick.hostfile, '--json']),
      ]);
      assert.equal(json.code, 0, shown(json));
      const reports = jsonLines(json.stdout);
      assert.deepEqual(
        reports.map((r) => r.endpoint),
        sim.endpoints,
      );
      for (const r of reports) {
        assert.equal(r.status, 'up');
        assert.ok(r.models.some((m: { id: string }) => m.id === 'sim-model'));
      }

      assert.equal(table.code, 0, shown(table));
      for (const ep of sim.endpoints) assert.ok(table.stdout.includes(ep), `table lists ${ep}`);

      assert.equal(closed.code, 1, shown(closed));
      const closedReports = jsonLines(closed.stdout);
      assert.equal(closedReports.length, 3);
      assert.deepEqual(
        closedReports.map((r) => r.status === 'up'),
        [true, true, false],
      );
      assert.equal(closedReports[2]!.endpoint, `127.0.0.1:${port}`);

      assert.equal(unhealthy.code, 1, shown(unhealthy));
      const sickReports = jsonLines(unhealthy.stdout);
      assert.equal(sickReports.length, 1);
      assert.equal(sickReports[0]!.status, 'degraded', 'a 503 /health: the pool\'s word for it, as the tree and the panel say');
      assert.match(table.stdout.split('\n')[1]!, /\bhealthy\b/, 'the table shows the label every view shows');
    });
  });

  it('reduce: 5 items, fan-in 2 → levels of 5, 3, 2, 1 texts; bad reduce prompt → 2; nothing survives → 1', async () => {
    await scenario(async (s) => {
      const sim = await s.sim('hosts', 4);
      const faulty = await s.sim('faulty', 2, ['--fault-rate', '1']);
      const items = ['apples', 'bananas', 'cherries', 'dates', 'elderberries'];
      const itemsFile = await s.file('items.txt', `${items.slice(0, 2).join('\n')}\n\n${items.slice(2).join('\n')}\n`);
      const args = ['reduce', '--hostfile', sim.hostfile, '--prompt', 'Describe {item}', '--reduce-prompt', 'Merge (round {level}): {responses}', '--items', itemsFile, '--fanin', '2', '--quiet'];

      const json = await runCli([...args, '--json']);
      assert.equal(json.code, 0, shown(json));
      const outcome = JSON.parse(json.stdout) as { text: string; levels: Array<{ level: number; texts: string[] }> };
      assert.deepEqual(
        outcome.levels.map((l) => l.level),
        [0, 1, 2, 3],
      );
      assert.deepEqual(
        outcome.levels.map((l) => l.texts.length),
        [5, 3, 2, 1],
      );
      assert.deepEqual(
        outcome.levels[0]!.texts,
        items.map((i) => `completion: Describe ${i}`),
      );
      assert.ok(outcome.text.trim().length > 0);
      assert.equal(outcome.text, outcome.levels[3]!.texts[0]);
      for (const item of items) assert.ok(outcome.text.includes(item), `the final text goes back to every item (${item})`);
      const counts = await Promise.all(sim.endpoints.map(requestCounts));
      const generated = counts.reduce((n, c) => n + c.chat2xx + c.completions2xx, 0);
      assert.equal(generated, 5 + 3 + 2 + 1, 'one generation request per leaf and per merge');

      const plain = await runCli(args);
      assert.equal(plain.code, 0, shown(plain));
      assert.equal(plain.stdout, `${outcome.text}\n`, 'without --json: the final text');

      const noPlaceholder = await runCli(['reduce', '--hostfile', sim.hostfile, '--prompt', 'p', '--reduce-prompt', 'merge these', '--quiet']);
      assert.equal(noPlaceholder.code, 2, shown(noPlaceholder));
      assert.match(noPlaceholder.stderr, /\{responses\}/);

      const failed = await runCli(['reduce', '--hostfile', faulty.hostfile, '--prompt', 'p', '--reduce-prompt', 'merge {responses}', '--quiet']);
      assert.equal(failed.code, 1, shown(failed));
      assert.equal(failed.stdout.trim(), '');
    });
  });

  it('--help for swarm and every command exits 0 and describes the contract options', async () => {
    const expected: Record<string, string[]> = {
      scatter: ['--prompts', '--batch', '--no-batch', '--out', '--max-tokens', '--system', '--temperature', '--seed', '--param', '--quiet', ...SWARM_FLAGS_IN_CONTRACT],
      sim: ['--endpoints', '--hostfile', '--model', '--max-prompts', '--ttft-ms', '--fault-rate', '--fault-status', '--fault-after', '--die-after', '--hang', '--health-status', '--shuffle-choices', '--error-format'],
      health: ['--hostfile', '--json'],
      reduce: ['--prompt', '--reduce-prompt', '--items', '--fanin', '--json', ...SWARM_FLAGS_IN_CONTRACT],
      demo: [],
    };
    const [top, ...runs] = await Promise.all([runCli(['--help']), ...Object.keys(expected).map((cmd) => runCli([cmd, '--help']))]);
    assert.equal(top!.code, 0, shown(top!));
    for (const cmd of Object.keys(expected)) assert.match(top!.stdout, new RegExp(`^\\s+${cmd}\\b`, 'm'), `swarm --help lists ${cmd}`);
    Object.entries(expected).forEach(([cmd, flags], k) => {
      const r = runs[k]!;
      assert.equal(r.code, 0, `${cmd} --help\n${shown(r)}`);
      for (const flag of flags) {
        const line = r.stdout.split('\n').find((l) => new RegExp(`(^|[\\s,])${flag}(\\s|$)`).test(l));
        assert.ok(line, `swarm ${cmd} --help describes ${flag}\n${r.stdout}`);
      }
    });
  });

  it('demo exits 0 and compares batched with individual', async () => {
    const r = await runCli(['demo'], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, shown(r));
    assert.match(r.stdout, /3 rounds alternating the arms/);
    // Both arms answered every prompt, and the HTTP request counts show the batching.
    assert.equal(r.stdout.match(/512 ok · 0 failed · 0 cancelled/g)?.length, 2, r.stdout);
    assert.match(r.stdout, /over all rounds batched sent 15 HTTP requests \(\/v1\/completions 12 · \/tokenize 2 · \/v1\/chat\/completions\/batch \(probe\) 1\) where individual sent [\d,]+ \(\/v1\/chat\/completions [\d,]+\)/);
    // Matched work in flight: 512 prompts fit the 4 servers' 1,024 slots, so the individual arm may send all of them at once.
    assert.match(r.stdout, /^ {2}individual in flight: cap 512 requests, at the peak \d[\d,]* prompts in \d[\d,]* requests; client CPU \d+\.\d\d s$/m);
    assert.match(r.stdout, /^ {2}batched {4}in flight: cap 512 requests, at the peak 512 prompts in 4 requests; client CPU/m);
    assert.match(r.stdout, /^ {2}verdict: (matched|not matched): /m);
  });
});

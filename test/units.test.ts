import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parsePrompts, percentile, PromptFile, sizeMaxTokens } from '../src/core/index.ts';
import { serverErrorMessage } from '../src/core/http/failure.ts';
import { fillTemplate } from '../src/core/run/plan.ts';
import { chatBody, completionsBody, readChat, readCompletions } from '../src/core/requests/request-shapes.ts';
import { backoffDelay, DEFAULT_RETRY, nextRetry, RECONNECT_RETRY } from '../src/core/pool/retry.ts';
import { RequestFailure } from '../src/core/http/failure.ts';
import { SwarmPool } from '../src/core/pool/swarm-pool.ts';
import { OrderedJsonlWriter } from '../src/core/results/results-file.ts';
import { resultRow } from '../src/core/results/result-row.ts';
import { failedResult, type PromptResult } from '../src/core/run/result.ts';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withServer } from './helpers/sim-server.ts';

describe('request shapes', () => {
  it('builds chat and list-prompt bodies with options and extra fields, ours winning', () => {
    const gen = { system: 'be brief', temperature: 0.2, topP: 0.9, seed: 1, stop: ['\n'], n: 2, extra: { reasoning_effort: 'low', cache_salt: 's' } };
    assert.deepEqual(chatBody('q', gen, 'm', 64), {
      reasoning_effort: 'low', cache_salt: 's', model: 'm', max_tokens: 64, temperature: 0.2, top_p: 0.9, seed: 1, stop: ['\n'], n: 2,
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'q' }],
    });
    assert.deepEqual(completionsBody(['a', 'b'], { system: 'S' }, 'm', 8).prompt, ['S\n\na', 'S\n\nb']);
  });

  it("asks an unstreamed list for its answers' token ids unless told not to; a stream counts from its usage instead", () => {
    assert.equal(completionsBody(['a'], {}, 'm', 8).return_token_ids, true);
    assert.equal(completionsBody(['a'], { tokenIds: false }, 'm', 8).return_token_ids, undefined);
    const streamed = completionsBody(['a'], {}, 'm', 8, true);
    assert.equal(streamed.return_token_ids, undefined);
    assert.deepEqual(streamed.stream_options, { include_usage: true, continuous_usage_stats: true });
  });

  it('refuses max_tokens that leaves no room for a prompt on any endpoint, before any generation request', async () => {
    await withServer({ maxModelLen: 100 }, async (server) => {
      const pool = new SwarmPool([server.endpoint]);
      try {
        await assert.rejects(pool.select({ maxTokens: 100 }, [], new AbortController().signal), /max_tokens 100 leaves no room for a prompt: sim-model's context \(max_model_len\) is 100 tokens/);
        assert.equal((await pool.select({ maxTokens: 99 }, [], new AbortController().signal)).members.length, 1);
        assert.equal(server.stats().generationRequests, 0);
      } finally {
        await pool.close();
      }
    });
  });

  it('refuses extra fields that would replace the pool\'s own', async () => {
    const pool = new SwarmPool([]);
    await assert.rejects(pool.select({ extra: { prompt: 'x' } }, [], new AbortController().signal), /prompt are set by Swarm Lab itself/);
  });

  it('matches list-prompt choices by index = prompt·n + j', () => {
    const body = { choices: [{ index: 3, text: 'b1' }, { index: 0, text: 'a0' }, { index: 2, text: 'b0' }, { index: 1, text: 'a1' }] };
    assert.deepEqual(readCompletions(body, 2, 2).map((a) => [a!.text, a!.texts]), [['a0', ['a0', 'a1']], ['b0', ['b0', 'b1']]]);
  });

  it('refuses a reply whose choices are not exactly prompts × n with every index once', () => {
    const one = (index: number, text = 'x') => ({ index, text, finish_reason: 'stop' });
    assert.throws(() => readCompletions({ choices: [one(0)] }, 2, 1), /returned 1 choice\(s\) for 2 prompts × n=1, expected 2/);
    // A server that ignores n: prompt 1's answer must never become prompt 0's second sample.
    assert.throws(() => readCompletions({ choices: [one(0), one(1)] }, 2, 2), /1 choice per prompt for n=2: it may not support n/);
    assert.throws(() => readCompletions({ choices: [one(0), one(0)] }, 2, 1), /every index once/);
    assert.throws(() => readCompletions({ choices: [one(0), one(2)] }, 2, 1), /every index once/);
    assert.throws(() => readCompletions({ choices: [one(0), one(1), one(2)] }, 2, 1), /returned 3 choice/);
    assert.throws(() => readChat({ choices: [{ index: 0, message: { content: 'a' } }] }, 3), /1 choice per prompt for n=3/);
  });

  it('reads reasoning from either field, never as the answer', () => {
    assert.deepEqual(readChat({ choices: [{ index: 0, message: { content: null, reasoning_content: 'hmm' }, finish_reason: 'length' }] }), { text: null, reasoning: 'hmm', finishReason: 'length' });
    assert.throws(() => readChat({ object: 'x' }), /no choices \(keys: object\)/);
  });
});

describe('server error bodies', () => {
  it('reads nested, flat, FastAPI and plain bodies', () => {
    assert.equal(serverErrorMessage(400, '{"error":{"message":"too long","type":"BadRequestError","code":400}}'), 'HTTP 400: too long');
    assert.equal(serverErrorMessage(400, '{"object":"error","message":"too long","type":"BadRequestError","code":400}'), 'HTTP 400: too long');
    assert.equal(serverErrorMessage(404, '{"detail":"Not Found"}'), 'HTTP 404: Not Found');
    assert.equal(serverErrorMessage(502, 'Bad Gateway'), 'HTTP 502: Bad Gateway');
    assert.equal(serverErrorMessage(503, ''), 'HTTP 503');
  });
});

describe('sizing and timing', () => {
  it("follows Aurora-Swarm's max_tokens formula", () => {
    assert.equal(sizeMaxTokens(400, 8192, 512, 512), 512);
    assert.equal(sizeMaxTokens(400, 700, 512, 512), 128);
    assert.equal(sizeMaxTokens(4000, 2048, 1024, 512), 536);
  });

  it('scales a batch timeout by its waves, with an optional cap', () => {
    const pool = new SwarmPool([], { timeoutMs: 300_000, timeoutPerSequenceMs: 60_000, maxNumSeqs: 256 });
    assert.equal(pool.batchTimeoutMs(500), 300_000); // 2 waves → max(300, 120) s
    assert.equal(pool.batchTimeoutMs(2000), 480_000); // 8 waves
    assert.equal(new SwarmPool([], { batchTimeoutCapMs: 400_000 }).batchTimeoutMs(2000), 400_000);
  });

  it('keeps backoff within [0, min(max, base·2^(n-1))]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (n, r) => {
        const d = backoffDelay(n, DEFAULT_RETRY, () => r);
        return d >= 0 && d <= Math.min(DEFAULT_RETRY.maxDelayMs, DEFAULT_RETRY.baseDelayMs * 2 ** (n - 1));
      }),
    );
  });

  it('one retry decision: transient failures only, within attempts, one refusal and the budget; a tunnel reconnects forever at 1, 2, 4, 8, 16, 30 s', () => {
    const tally = (attempts: number, refusals = 0, startedAt = 0) => ({ attempts, refusals, startedAt });
    const reset = new RequestFailure('reset', 'reset');
    assert.equal(nextRetry(new RequestFailure('http', 'bad', 400), tally(1), DEFAULT_RETRY, 0), null, 'a 400 is the prompt\'s fault');
    assert.equal(nextRetry(new RequestFailure('timeout', 't'), tally(1), DEFAULT_RETRY, 0), null, 'a run\'s timeout fails over');
    assert.notEqual(nextRetry(new RequestFailure('timeout', 't'), tally(1), { ...DEFAULT_RETRY, retryTimeouts: true }, 0), null, 'a lookup\'s is tried again');
    assert.notEqual(nextRetry(reset, tally(DEFAULT_RETRY.maxAttempts - 1), DEFAULT_RETRY, 0), null);
    assert.equal(nextRetry(reset, tally(DEFAULT_RETRY.maxAttempts), DEFAULT_RETRY, 0), null, 'out of attempts');
    assert.equal(nextRetry(new RequestFailure('refused', 'r'), tally(1, 1), DEFAULT_RETRY, 0), DEFAULT_RETRY.refusedRetryDelayMs);
    assert.equal(nextRetry(new RequestFailure('refused', 'r'), tally(2, 2), DEFAULT_RETRY, 0), null, 'refused twice: down, not busy');
    assert.equal(nextRetry(new RequestFailure('http', 'busy', 503, { retryAfterMs: 1_234 }), tally(1), DEFAULT_RETRY, 0), 1_234, 'Retry-After is obeyed');
    assert.equal(nextRetry(new RequestFailure('http', 'busy', 503, { retryAfterMs: 1_000 }), tally(1), DEFAULT_RETRY, DEFAULT_RETRY.budgetMs), null, 'past the budget');
    const waits = [1, 2, 3, 4, 5, 6, 100].map((n) => nextRetry(new RequestFailure('tunnel', 'ssh: exit 255'), tally(n), RECONNECT_RETRY, 1e9));
    assert.deepEqual(waits, [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('computes percentiles as numpy does', () => {
    assert.equal(percentile([1, 2, 3, 4], 50), 2.5);
    assert.equal(percentile([10], 99), 10);
    assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99), 9.91);
  });
});

describe('templates', () => {
  it('substitutes literally in one pass', () => {
    assert.equal(fillTemplate('{a} {b} {c}', { a: '{b}', b: '$1' }), '{b} $1 {c}');
  });
});

describe('prompt files', () => {
  it('reads text prompts, skipping blank lines, index counting prompts', () => {
    assert.deepEqual(parsePrompts('a\n\n  \nb\r\nc\n', 'p.txt').map((p) => p.prompt), ['a', 'b', 'c']);
  });

  it('reads JSONL, other fields into input, errors naming file and line', () => {
    assert.deepEqual(parsePrompts('{"prompt":"x","id":1}\n\n{"prompt":"y"}\n', 'p.jsonl'), [{ prompt: 'x', input: { id: 1 } }, { prompt: 'y', input: {} }]);
    assert.throws(() => parsePrompts('{"prompt":"x"}\n{oops\n{"id":2}\n', 'p.jsonl'), (err: Error) => {
      assert.match(err.message, /^p\.jsonl:2: not valid JSON/m);
      assert.match(err.message, /^p\.jsonl:3: "prompt" must be a string/m);
      return true;
    });
    assert.throws(() => parsePrompts('\n\n', 'empty.txt'), /empty\.txt: no prompts/);
  });

  it('a prompts file held as bytes gives back each prompt as written, any text, any line ending', () => {
    const line = fc.string({ unit: 'grapheme', minLength: 1 }).filter((t) => !/[\r\n]/.test(t) && t.trim() !== '');
    const input = fc.dictionary(fc.string().filter((k) => k !== 'prompt' && k !== '__proto__'), fc.oneof(fc.integer(), fc.string()));
    fc.assert(
      fc.property(fc.array(fc.record({ prompt: line, input }), { minLength: 1 }), fc.array(fc.constantFrom('\n', '\r\n', '\n\n', '\n  \n')), fc.boolean(), (rows, breaks, bom) => {
        const join = (lines: string[]) => (bom ? '\uFEFF' : '') + lines.map((l, i) => l + (breaks[i % Math.max(1, breaks.length)] ?? '\n')).join('');
        const jsonl = PromptFile.of(Buffer.from(join(rows.map((r) => JSON.stringify({ ...r.input, prompt: r.prompt })))), 'p.jsonl');
        assert.equal(jsonl.length, rows.length);
        rows.forEach((r, i) => assert.deepEqual(jsonl.at(i), { prompt: r.prompt, input: { ...r.input } }));
        const plain = rows.map((r) => r.prompt).filter((t) => !t.trim().startsWith('{'));
        if (!plain.length) return;
        const text = PromptFile.of(Buffer.from(join(plain)), 'p.txt');
        assert.deepEqual(text.toArray(), plain.map((prompt) => ({ prompt })));
        assert.equal(text.at(plain.length), undefined);
      }),
    );
  });
});

describe('results file', () => {
  it('writes a row exactly as JSON.stringify would, for any result', () => {
    const text = fc.string({ unit: 'binary' });
    const ms = fc.option(fc.oneof(fc.double({ noNaN: false }), fc.integer()), { nil: null });
    const result = fc.record(
      {
        index: fc.nat(),
        prompt: text,
        status: fc.constantFrom('ok', 'failed', 'cancelled'),
        ok: fc.boolean(),
        text,
        reasoning: fc.option(text, { nil: null }),
        error: fc.option(text, { nil: null }),
        endpoint: fc.option(text, { nil: null }),
        finishReason: fc.option(text, { nil: null }),
        promptTokens: fc.option(fc.nat(), { nil: null }),
        completionTokens: fc.option(fc.nat(), { nil: null }),
        attempts: fc.nat(),
        timings: fc.record({ queuedMs: fc.double(), sentMs: ms, firstByteMs: ms, firstTokenMs: ms, doneMs: fc.double() }),
        input: fc.dictionary(fc.string(), fc.jsonValue()),
        texts: fc.array(text),
        level: fc.nat(),
        embedding: fc.array(fc.double({ noNaN: true })),
        template: fc.constantFrom('server', 'file', 'none'),
      },
      { requiredKeys: ['index', 'prompt', 'status', 'ok', 'text', 'reasoning', 'error', 'endpoint', 'finishReason', 'promptTokens', 'completionTokens', 'attempts', 'timings', 'input'] },
    );
    fc.assert(
      fc.property(result, fc.nat(), (r, index) => {
        const row = resultRow(r as PromptResult, index);
        assert.equal(row, JSON.stringify({ ...r, index }));
      }),
      { numRuns: 500 },
    );
  });

  const row = (index: number, text: string): PromptResult => ({
    ...failedResult({ index, prompt: `p${index}`, queuedMs: 0 }, 'failed', 'x', 1),
    text,
  });

  it('keeps a row larger than its write buffer whole, multi-byte text included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rows-'));
    try {
      const path = join(dir, 'out.jsonl');
      const writer = new OrderedJsonlWriter({ path });
      const texts = ['a', 'é€😀'.repeat(300_000), 'b', 'ü'.repeat(10)];
      for (const i of [3, 1, 0, 2]) writer.add(row(i, texts[i]!));
      assert.equal(await writer.close(4), 4);
      assert.deepEqual(readFileSync(path, 'utf8').trimEnd().split('\n').map((l) => (JSON.parse(l) as PromptResult).text), texts);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends in input order with the latest row of each index, however rows arrived', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.integer({ min: 1, max: 4000 }),
        async (total, stride, rewrites, seed) => {
          const dir = mkdtempSync(join(tmpdir(), 'rows-'));
          try {
            const path = join(dir, 'out.jsonl');
            const writer = new OrderedJsonlWriter({ path });
            // Strided arrival, as batches over `stride` endpoints finish; rows of varied length.
            const order = Array.from({ length: stride }, (_, s) => Array.from({ length: Math.ceil((total - s) / stride) }, (_, k) => s + k * stride)).flat();
            const text = (i: number, v: number) => 'x'.repeat((i * 7 + v * 13 + seed) % 90);
            for (const i of order) writer.add(row(i, text(i, 0)));
            const latest = new Map<number, number>();
            rewrites.forEach((r, v) => {
              const i = r % total;
              latest.set(i, v + 1);
              writer.add(row(i, text(i, v + 1)));
            });
            assert.equal(await writer.close(total), total);
            const lines = readFileSync(path, 'utf8').split('\n');
            assert.equal(lines.pop(), '');
            const read = lines.map((l) => JSON.parse(l) as PromptResult).map(({ index, prompt, text }) => ({ index, prompt, text }));
            assert.deepEqual(read, Array.from({ length: total }, (_, i) => ({ index: i, prompt: `p${i}`, text: text(i, latest.get(i) ?? 0) })));
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { SimServer, type SimOptions } from '../src/sim/index.ts';

// The official client must accept the simulator's answers exactly as it accepts vLLM's.
const FAST: Partial<SimOptions> = { ttftMs: 0, tpotMs: 0, requestOverheadMs: 0 };

function clientFor(server: SimServer): OpenAI {
  return new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'EMPTY', maxRetries: 0, timeout: 5000 });
}

let server: SimServer;
let client: OpenAI;

before(async () => {
  server = new SimServer({ ...FAST, maxModelLen: 200, reasoning: 'reasoning' });
  await server.start();
  client = clientFor(server);
});

after(() => server.close());

test('completions.create with a list of 3 prompts returns their texts in order, with usage', async () => {
  const prompts = ['first prompt', 'second', 'third one here'];
  const res = await client.completions.create({ model: 'sim-model', prompt: prompts, max_tokens: 8 });
  assert.equal(res.object, 'text_completion');
  assert.deepEqual(
    res.choices.map((c) => [c.index, c.text, c.finish_reason]),
    prompts.map((p, i) => [i, `completion: ${p}`, 'stop']),
  );
  assert.deepEqual(res.usage, { prompt_tokens: 4 + 2 + 4, completion_tokens: 3 + 2 + 4, total_tokens: 19 });
});

test('chat.completions.create answers the last user message and carries vLLM\'s reasoning field', async () => {
  const res = await client.chat.completions.create({
    model: 'sim-model',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'ping' },
    ],
    max_completion_tokens: 50,
  });
  const [choice] = res.choices;
  assert.equal(choice!.message.role, 'assistant');
  assert.equal(choice!.message.content, 'completion: ping');
  assert.equal((choice!.message as unknown as { reasoning: string }).reasoning.split(' ').length, 32);
  assert.equal(choice!.finish_reason, 'stop');
  assert.equal(res.usage?.completion_tokens, 34);
});

test('streaming chat delivers deltas that add up to the message, then a usage chunk', async () => {
  const stream = await client.chat.completions.create({
    model: 'sim-model',
    messages: [{ role: 'user', content: 'tell me more' }],
    max_tokens: 40,
    stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  let reasoning = '';
  const finishes: string[] = [];
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      content += c.delta.content ?? '';
      reasoning += (c.delta as { reasoning?: string }).reasoning ?? '';
      if (c.finish_reason) finishes.push(c.finish_reason);
    }
  }
  assert.equal(content, 'completion: tell me more');
  assert.equal(reasoning.split(' ').length, 32);
  assert.deepEqual(finishes, ['stop']);
  assert.equal(usage?.completion_tokens, 36);
});

test('streaming completions with a list prompt index choices prompt*n+j', async () => {
  const prompts = ['a', 'b', 'c'];
  const stream = await client.completions.create({ model: 'sim-model', prompt: prompts, n: 2, max_tokens: 5, stream: true });
  const texts = new Map<number, string>();
  const finished = new Set<number>();
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      texts.set(c.index, (texts.get(c.index) ?? '') + c.text);
      if (c.finish_reason) finished.add(c.index);
    }
  }
  assert.deepEqual([...finished].sort(), [0, 1, 2, 3, 4, 5]);
  for (const [index, text] of texts) assert.equal(text, `completion: ${prompts[Math.floor(index / 2)]}`);
});

test('streamed completions through the SDK: a delta per token, cut at a stop string, and the usage chunk stream_options {} asks for', async () => {
  const stream = await client.completions.create({ model: 'sim-model', prompt: 'alpha beta gamma', max_tokens: 10, stop: [' gamma'], stream: true, stream_options: {} });
  const texts: string[] = [];
  let last: OpenAI.CompletionChoice | undefined;
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      texts.push(c.text);
      last = c;
    }
  }
  assert.deepEqual(texts, ['completion:', ' alpha', ' beta', '']);
  assert.equal(last?.finish_reason, 'stop');
  assert.equal((last as unknown as { stop_reason: string }).stop_reason, ' gamma');
  assert.deepEqual(usage, { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });
});

test('vLLM errors surface as the client\'s typed errors with vLLM\'s message', async () => {
  await assert.rejects(client.completions.create({ model: 'other-model', prompt: 'x' }), (err: unknown) => {
    assert.ok(err instanceof OpenAI.NotFoundError);
    assert.equal(err.status, 404);
    assert.match(err.message, /The model `other-model` does not exist\./);
    assert.equal(err.type, 'NotFoundError');
    return true;
  });
  await assert.rejects(client.completions.create({ model: 'sim-model', prompt: ['ok', '7'.repeat(300)], max_tokens: 10 }), (err: unknown) => {
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.match(err.message, /maximum context length is 200 tokens/);
    return true;
  });
});

test('old flat error bodies reach the client as typed errors without vLLM\'s message', async () => {
  const old = new SimServer({ ...FAST, errorFormat: 'flat' });
  await old.start();
  try {
    await assert.rejects(clientFor(old).completions.create({ model: 'other-model', prompt: 'x' }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError);
      // openai-node reads only body.error, so a pre-0.10.1 body loses its message: clients must read the body themselves.
      assert.equal(err.message, '404 status code (no body)');
      return true;
    });
  } finally {
    await old.close();
  }
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { scatterGather, SwarmPool } from '../src/core/index.ts';
import { startSimCluster, type SimCluster } from '../src/sim/cluster.ts';
import { startLlamaCluster } from '../src/sim/llama/cluster.ts';
import type { SimOptions } from '../src/sim/options.ts';
import { FAST_RETRY } from './helpers/swarm.ts';

/**
 * One protocol suite, two engines: what any vLLM-compatible server must answer, asserted through the
 * official `openai` client, raw HTTP and our pool alike. Nothing here knows what text an engine writes:
 * answers are compared with the same engine's other answers (greedy decoding repeats itself) and
 * token counts with its own /tokenize.
 */
/** `start` as users run it; `exact` where greedy tokens are compared across runs (llama.cpp's numbers may depend on which sequences share a batch). */
type Engine = { name: string; start: (options?: Partial<SimOptions>) => Promise<SimCluster>; exact: (options?: Partial<SimOptions>) => Promise<SimCluster> };
const simulated = (options?: Partial<SimOptions>) => startSimCluster(1, { reply: 'lorem', ttftMs: 0, tpotMs: 0, requestOverheadMs: 0, maxModelLen: 1024, ...options });
const ENGINES: Engine[] = [
  { name: 'simulated', start: simulated, exact: simulated },
  // Four sequences decoded together: a batch's prompts share llama.cpp's batches, as in vLLM.
  { name: 'llama.cpp', start: (options) => startLlamaCluster(1, options ?? {}, { parallel: 4, threads: 1 }), exact: (options) => startLlamaCluster(1, options ?? {}, { parallel: 1, threads: 1 }) },
];

const GREEDY = { temperature: 0, ignore_eos: true } as const;

for (const engine of ENGINES) {
  describe(`protocol: ${engine.name} engine`, () => {
    let cluster: SimCluster;
    let client: OpenAI;
    let origin: string;
    let model: string;
    let maxModelLen: number;

    const post = async (path: string, body: object): Promise<{ status: number; json: Record<string, any> }> => {
      const res = await fetch(origin + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, json: (await res.json()) as Record<string, any> };
    };
    const tokenCount = async (body: object): Promise<number> => (await post('/tokenize', { model, ...body })).json['count'] as number;

    before(async () => {
      cluster = await engine.start();
      origin = `http://127.0.0.1:${cluster.endpoints[0]!.port}`;
      client = new OpenAI({ baseURL: `${origin}/v1`, apiKey: 'EMPTY', maxRetries: 0, timeout: 60_000 });
      const card = (await client.models.list()).data[0] as unknown as { id: string; max_model_len: number };
      model = card.id;
      maxModelLen = card.max_model_len;
    });
    after(() => cluster.close());

    it('completions with a list prompt and n: choices indexed prompt*n+j, usage from its own tokenizer', async () => {
      const prompts = ['the first prompt', 'second', 'a third one here'];
      const res = await client.completions.create({ model, prompt: prompts, n: 2, max_tokens: 6, ...GREEDY } as OpenAI.CompletionCreateParamsNonStreaming);
      assert.equal(res.object, 'text_completion');
      assert.deepEqual(res.choices.map((c) => c.index).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5]);
      const byIndex = new Map(res.choices.map((c) => [c.index, c]));
      for (let p = 0; p < prompts.length; p++) {
        assert.equal(byIndex.get(p * 2)!.text, byIndex.get(p * 2 + 1)!.text, 'greedy choices of one prompt agree');
        assert.equal(byIndex.get(p * 2)!.finish_reason, 'length');
      }
      const promptTokens = (await Promise.all(prompts.map((prompt) => tokenCount({ prompt })))).reduce((a, b) => a + b, 0);
      assert.deepEqual(res.usage, { prompt_tokens: promptTokens, completion_tokens: 36, total_tokens: promptTokens + 36 });
    });

    it('a token-id prompt from /tokenize is answered as its text is; /detokenize reads it back', async () => {
      const { json } = await post('/tokenize', { model, prompt: 'hello world' });
      const asText = await client.completions.create({ model, prompt: 'hello world', max_tokens: 8, ...GREEDY } as OpenAI.CompletionCreateParamsNonStreaming);
      const asIds = await client.completions.create({ model, prompt: json['tokens'], max_tokens: 8, ...GREEDY } as OpenAI.CompletionCreateParamsNonStreaming);
      assert.equal(asIds.choices[0]!.text, asText.choices[0]!.text);
      assert.equal(asIds.usage!.prompt_tokens, json['count']);
      assert.match((await post('/detokenize', { model, tokens: json['tokens'] })).json['prompt'], /hello world$/);
    });

    it('streamed completions add up to the unstreamed answer: one finish per choice, then the usage chunk', async () => {
      const body = { model, prompt: ['alpha', 'beta'], n: 2, max_tokens: 10, ...GREEDY };
      const whole = await client.completions.create(body as OpenAI.CompletionCreateParamsNonStreaming);
      const stream = await client.completions.create({ ...body, stream: true, stream_options: { include_usage: true } } as OpenAI.CompletionCreateParamsStreaming);
      const texts = new Map<number, string>();
      const finishes: number[] = [];
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        assert.equal(usage, undefined, 'nothing after the usage chunk');
        if (chunk.usage) usage = chunk.usage;
        for (const c of chunk.choices) {
          texts.set(c.index, (texts.get(c.index) ?? '') + c.text);
          if (c.finish_reason) finishes.push(c.index);
        }
      }
      assert.deepEqual(finishes.sort(), [0, 1, 2, 3]);
      for (const c of whole.choices) assert.equal(texts.get(c.index), c.text);
      assert.deepEqual(usage, whole.usage);
    });

    it('chat: an assistant message with tool_calls []; streamed opens with the role and adds up; prompt tokens are /tokenize of the messages', async () => {
      const messages = [
        { role: 'system' as const, content: 'You are terse.' },
        { role: 'user' as const, content: 'What is a swarm?' },
      ];
      const whole = await client.chat.completions.create({ model, messages, max_tokens: 12, ...GREEDY } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      const choice = whole.choices[0]!;
      assert.equal(whole.object, 'chat.completion');
      assert.equal(choice.message.role, 'assistant');
      assert.deepEqual(choice.message.tool_calls, []);
      assert.equal(choice.finish_reason, 'length');
      assert.equal(whole.usage!.prompt_tokens, await tokenCount({ messages, add_generation_prompt: true }));
      assert.equal(whole.usage!.completion_tokens, 12);
      const stream = await client.chat.completions.create({ model, messages, max_tokens: 12, ...GREEDY, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
      let content = '';
      let first: OpenAI.ChatCompletionChunk | undefined;
      for await (const chunk of stream) {
        first ??= chunk;
        content += chunk.choices[0]?.delta.content ?? '';
      }
      assert.equal(first!.choices[0]!.delta.role, 'assistant');
      assert.equal(content, choice.message.content);
    });

    it('a stop string cuts the text before it, with finish_reason stop and the string as stop_reason', async () => {
      const free = await client.completions.create({ model, prompt: 'tell me a story', max_tokens: 24, ...GREEDY } as OpenAI.CompletionCreateParamsNonStreaming);
      const text = free.choices[0]!.text;
      // Two characters from the middle of what the engine writes anyway; the cut is at their first occurrence.
      const stop = [...text].slice(8, 10).join('');
      assert.equal([...stop].length, 2, `an answer long enough to cut: ${JSON.stringify(text)}`);
      const cut = await client.completions.create({ model, prompt: 'tell me a story', max_tokens: 24, ...GREEDY, stop: [stop] } as OpenAI.CompletionCreateParamsNonStreaming);
      const c = cut.choices[0]! as OpenAI.CompletionChoice & { stop_reason: string | null };
      assert.equal(c.text, text.slice(0, text.indexOf(stop)));
      assert.equal(c.finish_reason, 'stop');
      assert.equal(c.stop_reason, stop);
    });

    it('sampling: the same seed repeats an answer, another seed changes it', async () => {
      const ask = (seed: number) => client.completions.create({ model, prompt: 'once upon a time', max_tokens: 16, temperature: 1, seed, ignore_eos: true } as OpenAI.CompletionCreateParamsNonStreaming);
      const [a, again, b] = await Promise.all([ask(1), ask(1), ask(2)]);
      assert.equal(again.choices[0]!.text, a.choices[0]!.text);
      assert.notEqual(b.choices[0]!.text, a.choices[0]!.text);
    });

    it('errors: vLLM bodies and status codes, typed by the client', async () => {
      await assert.rejects(client.completions.create({ model: 'no-such-model', prompt: 'x' }), (err: unknown) => err instanceof OpenAI.NotFoundError && /does not exist/.test(err.message));
      await assert.rejects(client.completions.create({ model, prompt: 'x', max_tokens: maxModelLen }), (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.match(err.message, new RegExp(`maximum context length is ${maxModelLen} tokens`));
        return true;
      });
      const empty = await post('/v1/completions', { model, prompt: [] });
      assert.equal(empty.status, 400);
      assert.deepEqual(Object.keys(empty.json['error']).sort(), ['code', 'message', 'param', 'type']);
      assert.equal(empty.json['error'].type, 'BadRequestError');
      assert.equal((await post('/v1/completions', { model, prompt: 'x', temperature: -1 })).status, 400);
    });

    it('our pool: at temperature 0 every templated path gives each prompt the tokens individual chat gives', async () => {
      // The batch chat endpoint (0.19) and the skeleton (an older server), on servers that decode one sequence at a time:
      // with four at once, which sequences share a batch changes llama.cpp's last bits, and greedy tokens may part.
      const [older, newer] = await Promise.all([engine.exact({ vllmVersion: '0.15' }), engine.exact({ vllmVersion: '0.19' })]);
      const pools = [new SwarmPool(older.endpoints, { retry: FAST_RETRY }), new SwarmPool(newer.endpoints, { retry: FAST_RETRY })];
      try {
        const prompts = ['What is a swarm?', 'Name three colors.', '  Write a haiku about rain.\n', 'hello'];
        const gen = { maxTokens: 16, temperature: 0, system: 'You are terse.' };
        const chat = await scatterGather(pools[0]!, prompts, { ...gen, batch: false }).done;
        const [skeleton, chatBatch] = await Promise.all(pools.map(async (pool) => (await scatterGather(pool, prompts, { ...gen, template: 'auto' }).done).results));
        const paths: Array<[string, typeof skeleton]> = [['skeleton', skeleton!], ['chat-batch', chatBatch!]];
        for (const [path, results] of paths) {
          assert.deepEqual(results.map((r) => [r.status, r.template]), Array(4).fill(['ok', path]));
          assert.deepEqual(results.map((r) => r.prompt), prompts);
          assert.deepEqual(results.map((r) => r.text), chat.results.map((r) => r.text), path);
          assert.deepEqual(results.map((r) => r.finishReason), chat.results.map((r) => r.finishReason), path);
          assert.deepEqual(results.map((r) => r.completionTokens), chat.results.map((r) => r.completionTokens), path);
        }
      } finally {
        await Promise.all(pools.map((p) => p.close()));
        await Promise.all([older.close(), newer.close()]);
      }
    });

    it("each row's own tokens in every mode, --stream-interval 3 included: completionTokens is the server's count, max_tokens where cut", async () => {
      const coarse = await engine.start({ streamInterval: 3, vllmVersion: '0.19' });
      const pool = new SwarmPool(coarse.endpoints, { retry: FAST_RETRY });
      try {
        const prompts = ['one', 'a second prompt', 'three', 'and a fourth, longer than the others'];
        const gen = { maxTokens: 24, temperature: 0, extra: { ignore_eos: true } };
        const modes = {
          'chat-batch': { template: 'auto' as const },
          skeleton: { template: 'auto' as const, stream: true },
          raw: { template: 'none' as const },
          'raw streamed': { template: 'none' as const, stream: true },
          individual: { batch: false },
          'individual streamed': { batch: false, stream: true },
        };
        for (const [mode, options] of Object.entries(modes)) {
          const { results, summary } = await scatterGather(pool, prompts, { ...gen, ...options }).done;
          assert.deepEqual(results.map((r) => [r.status, r.finishReason, r.completionTokens]), Array(4).fill(['ok', 'length', 24]), mode);
          assert.equal(summary.completionTokens, 4 * 24, `${mode}: the servers' usage`);
          assert.equal(summary.uncounted, 0, mode);
          // Prompt tokens where the server tells them apart (the batch chat endpoint gives no per-conversation prompt ids).
          if (mode !== 'chat-batch') assert.equal(results.reduce((s, r) => s + r.promptTokens!, 0), summary.promptTokens, `${mode}: prompt tokens add up`);
          if ('stream' in options) assert.ok(summary.tpot!.meanMs >= 0);
        }
      } finally {
        await pool.close();
        await coarse.close();
      }
    });
  });
}

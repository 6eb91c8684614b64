import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { SimServer } from '../src/sim/index.ts';

let server: SimServer;
let origin: string;

before(async () => {
  server = new SimServer({ ttftMs: 0, tpotMs: 0, requestOverheadMs: 0, maxModelLen: 64 });
  await server.start();
  origin = `http://127.0.0.1:${server.port}`;
});

after(() => server.close());

async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await request(origin + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.statusCode, json: await res.body.json() };
}

test('/tokenize counts a prompt unlike chars/4: letters 4 to a token, each digit, mark and CJK character one; pieces in the byte-level alphabet', async () => {
  // token_strs are convert_ids_to_tokens, as vLLM gives them: a space is Ġ, a newline Ċ, a CJK character its UTF-8 bytes.
  const cases: Array<[string, string[]]> = [
    ['Hello world', ['Hell', 'o', 'Ġworl', 'd']],
    ['x = 12345;\n', ['x', 'Ġ', '=', 'Ġ', '1', '2', '3', '4', '5', ';', 'Ċ']],
    ['你好<|im_end|>', ['ä½ł', 'å¥½', '<|im_end|>']],
  ];
  for (const [prompt, pieces] of cases) {
    const { status, json } = await post('/tokenize', { prompt, return_token_strs: true });
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(json), ['count', 'max_model_len', 'tokens', 'token_strs']);
    assert.deepEqual(json.token_strs, pieces);
    assert.equal(json.count, pieces.length);
    assert.equal(json.tokens.length, pieces.length);
    assert.equal(json.max_model_len, 64);
    const back = await post('/detokenize', { tokens: json.tokens });
    assert.deepEqual(back, { status: 200, json: { prompt } });
  }
  assert.equal((await post('/tokenize', { prompt: 'abc' })).json.token_strs, null);
});

test('/tokenize renders messages with the chat template; add_generation_prompt and continue_final_message as vLLM', async () => {
  const messages = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
  ];
  const render = async (extra: object): Promise<string> => {
    const { status, json } = await post('/tokenize', { messages, ...extra });
    assert.equal(status, 200);
    return (await post('/detokenize', { tokens: json.tokens })).json.prompt;
  };
  const turns = '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n';
  assert.equal(await render({}), turns + '<|im_start|>assistant\n');
  assert.equal(await render({ add_generation_prompt: false }), turns);
  assert.equal(await render({ add_generation_prompt: false, continue_final_message: true }), turns.slice(0, -'<|im_end|>\n'.length));
  const both = await post('/tokenize', { messages, continue_final_message: true });
  assert.equal(both.status, 400);
  assert.match(both.json.error.message, /Cannot set both `continue_final_message` and `add_generation_prompt` to True/);
});

test('chat usage counts the rendered template, so /tokenize with messages predicts prompt_tokens exactly', async () => {
  const messages = [{ role: 'user', content: 'How many tokens is 2+2?' }];
  const { json: tokenized } = await post('/tokenize', { messages });
  const { json } = await post('/v1/chat/completions', { messages, max_tokens: 5 });
  assert.equal(json.usage.prompt_tokens, tokenized.count);
});

test('token-id prompts: list[int] is one prompt, list[list[int]] many; answered as their decoded text', async () => {
  const ids = async (prompt: string): Promise<number[]> => (await post('/tokenize', { prompt })).json.tokens;
  const [a, b] = [await ids('alpha'), await ids('beta 7')];
  const one = await post('/v1/completions', { prompt: a, max_tokens: 8 });
  assert.equal(one.status, 200);
  assert.equal(one.json.choices[0].text, 'completion: alpha');
  assert.equal(one.json.usage.prompt_tokens, a.length);
  const many = await post('/v1/completions', { prompt: [a, b], max_tokens: 8 });
  assert.deepEqual(many.json.choices.map((c: any) => c.text), ['completion: alpha', 'completion: beta 7']);
  assert.equal(many.json.usage.prompt_tokens, a.length + b.length);
});

test('empty prompts, out-of-vocabulary ids and mixed lists are 400s', async () => {
  for (const prompt of ['', ['ok', ''], [[]], [[81], []]]) {
    const { status, json } = await post('/v1/completions', { prompt });
    assert.equal(status, 400, JSON.stringify(prompt));
    assert.match(json.error.message, /prompt cannot be empty/);
  }
  const oov = await post('/v1/completions', { prompt: [15] });
  assert.equal(oov.status, 400);
  assert.match(oov.json.error.message, /Token id 15 is out of vocabulary/);
  assert.equal((await post('/v1/completions', { prompt: ['a', [81]] })).status, 400);
  assert.equal((await post('/detokenize', { tokens: [-1] })).status, 400);
});

test('a prompt a chars/4 estimate sizes to fit overflows the simulated tokenizer', async () => {
  const digits = '1'.repeat(100); // chars/4 says 25 tokens; it is 100
  const { status, json } = await post('/v1/completions', { prompt: digits, max_tokens: 8 });
  assert.equal(status, 400);
  assert.match(json.error.message, /maximum context length is 64 tokens\. However, you requested 108 tokens \(100 in the messages, 8 in the completion\)/);
});

test('a batch rendered through /tokenize answers as chat does: same text, same prompt tokens (lorem with temperature 0 too)', async () => {
  const lorem = new SimServer({ ttftMs: 0, tpotMs: 0, requestOverheadMs: 0, reply: 'lorem', answerTokens: 12 });
  await lorem.start();
  try {
    for (const port of [server.port, lorem.port]) {
      const at = async (path: string, body: object): Promise<any> =>
        (await request(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: JSON.stringify(body) })).body.json();
      const questions = ['What is 2+2?', 'Name a colour.'];
      const conversations = questions.map((q) => [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: q }]);
      const ids = await Promise.all(conversations.map(async (messages) => (await at('/tokenize', { messages, add_generation_prompt: true })).tokens));
      const batch = await at('/v1/completions', { prompt: ids, max_tokens: 30, temperature: 0 });
      for (const [i, messages] of conversations.entries()) {
        const chat = await at('/v1/chat/completions', { messages, max_tokens: 30, temperature: 0 });
        assert.equal(batch.choices[i].text, chat.choices[0].message.content);
        assert.equal(ids[i].length, chat.usage.prompt_tokens);
      }
    }
  } finally {
    await lorem.close();
  }
});

/**
 * Templated batches against the simulator over loopback: a batch sent to the batch chat endpoint,
 * placed in the server's chat template (a skeleton rendered once through /tokenize), rendered prompt
 * by prompt, or rendered by a template file asks the same question as chat, says which path it took,
 * and counts what it cost; harmony answers split as the chat endpoint splits them.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { compareBatching, scatterGather, SwarmPool } from '../src/core/index.ts';
import { renderedAnswer } from '../src/core/requests/request-shapes.ts';
import { loadTemplateFile, parseHarmony, TemplateFileError } from '../src/core/templating/index.ts';
import { ensureBuilt, runCli } from './helpers/cli.ts';
import { ignoringN, rewritingTemplate } from './helpers/odd-servers.ts';
import { withServer } from './helpers/sim-server.ts';
import { patience } from './helpers/patience.ts';

/** The simulator's own template (ChatML) as a Jinja file. */
const CHATML =
  "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'swarm-template-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const texts = (results: ReadonlyArray<{ text: string }>) => results.map((r) => r.text);

describe('templated batches', { timeout: patience(60_000) }, () => {
  it('skeleton: the template rendered once per system prompt (two /tokenize), every prompt answered as chat answers it', async () => {
    await withServer({ reply: 'echo' }, async (server) => {
      const pool = new SwarmPool([server.endpoint]);
      try {
        const prompts = ['What is 2+2?', 'Say hi.', 'What is 2+2?', 'Name a colour.', 'Say hi.'];
        const gen = { system: 'Be brief.', maxTokens: 16 };
        const batched = await scatterGather(pool, prompts, { ...gen, template: 'server' }).done;
        const chat = await scatterGather(pool, prompts, { ...gen, batch: false }).done;
        assert.deepEqual(texts(batched.results), texts(chat.results));
        assert.ok(batched.results.every((r) => r.ok && r.template === 'skeleton'));
        assert.ok(chat.results.every((r) => r.template === undefined), 'chat results name no batch template');
        // The batch chat endpoint is tried once (this server predates it), then two sentinels are rendered.
        const http = server.stats().httpRequests;
        assert.equal(http['POST /tokenize 200'], 2);
        assert.equal(http['POST /v1/chat/completions/batch 404'], 1);
        assert.deepEqual(batched.summary.requestsByPath, { '/v1/models': 1, '/tokenize': 2, '/v1/chat/completions/batch (probe)': 1, '/v1/completions': 1 });
        assert.equal(batched.summary.httpRequests, 5);
        const again = await scatterGather(pool, prompts, { ...gen, template: 'server' }).done;
        assert.equal(server.stats().httpRequests['POST /tokenize 200'], 2, 'the skeleton is kept for the pool');
        assert.deepEqual(again.summary.requestsByPath, { '/v1/completions': 1 });
        const other = await scatterGather(pool, prompts, { system: 'Be very brief.', maxTokens: 16, template: 'server' }).done;
        assert.equal(server.stats().httpRequests['POST /tokenize 200'], 4, 'another system prompt, another skeleton');
        assert.ok(other.results.every((r) => r.ok));
      } finally {
        await pool.close();
      }
    });
  });

  it('chat-batch: vLLM ≥ 0.19 serves the list of conversations itself, no rendering requests', async () => {
    await withServer({ reply: 'echo', vllmVersion: '0.19' }, async (server) => {
      const pool = new SwarmPool([server.endpoint]);
      try {
        const prompts = ['What is 2+2?', 'Say hi.', 'Name a colour.'];
        const gen = { system: 'Be brief.', maxTokens: 16 };
        const batched = await scatterGather(pool, prompts, { ...gen, template: 'auto' }).done;
        const chat = await scatterGather(pool, prompts, { ...gen, batch: false }).done;
        assert.deepEqual(texts(batched.results), texts(chat.results));
        assert.ok(batched.results.every((r) => r.ok && r.template === 'chat-batch'));
        assert.deepEqual(batched.results.map((r) => r.completionTokens), chat.results.map((r) => r.completionTokens));
        assert.equal(server.stats().httpRequests['POST /tokenize 200'], undefined);
        assert.equal(server.stats().httpRequests['POST /v1/chat/completions/batch 200'], 1);
        // Streamed batches cannot use it: they take the skeleton.
        const streamed = await scatterGather(pool, prompts, { ...gen, template: 'auto', stream: true }).done;
        assert.deepEqual(texts(streamed.results), texts(chat.results));
        assert.ok(streamed.results.every((r) => r.template === 'skeleton'));
      } finally {
        await pool.close();
      }
    });
  });

  it('a template that trims the content (Llama 3): the skeleton trims it too', async () => {
    await withServer({ reply: 'echo', chatTemplate: 'llama3' }, async (server) => {
      const pool = new SwarmPool([server.endpoint]);
      try {
        const prompts = ['  padded \n', '\tSay hi.', 'plain'];
        const batched = await scatterGather(pool, prompts, { maxTokens: 16, template: 'auto', extra: { echo: true } }).done;
        const chat = await scatterGather(pool, prompts, { maxTokens: 16, batch: false }).done;
        assert.deepEqual(texts(chat.results), ['completion: padded', 'completion: Say hi.', 'completion: plain']);
        assert.ok(batched.results.every((r) => r.template === 'skeleton'));
        assert.match(batched.results[0]!.text, /<\|start_header_id\|>user<\|end_header_id\|>\n\npadded<\|eot_id\|>/);
      } finally {
        await pool.close();
      }
    });
  });

  it('a template that rewrites the content: each prompt rendered by /tokenize, and the run says so', async () => {
    const odd = await rewritingTemplate();
    const pool = new SwarmPool([odd.endpoint]);
    try {
      const prompts = ['one', 'two', 'one'];
      const run = scatterGather(pool, prompts, { maxTokens: 8, template: 'auto' });
      const warnings: string[] = [];
      run.on('warning', (w) => warnings.push(w));
      const batched = await run.done;
      const chat = await scatterGather(pool, prompts, { maxTokens: 8, batch: false }).done;
      assert.deepEqual(texts(batched.results), texts(chat.results));
      assert.ok(batched.results.every((r) => r.template === 'tokenize'));
      assert.equal(warnings.filter((w) => /each prompt is rendered by its own POST \/tokenize/.test(w)).length, 1, warnings.join('\n'));
      // Two sentinels, then the two distinct prompts.
      assert.equal(odd.requests.get('/tokenize'), 4);
      assert.equal(batched.summary.requestsByPath['/tokenize'], 4);
    } finally {
      await pool.close();
      await odd.close();
    }
  });

  it('raw batches differ from chat: the system prompt is glued to the text', async () => {
    await withServer({ reply: 'echo' }, async (server) => {
      const pool = new SwarmPool([server.endpoint]);
      try {
        const raw = await scatterGather(pool, ['Say hi.'], { system: 'Be brief.', maxTokens: 16, template: 'none' }).done;
        const chat = await scatterGather(pool, ['Say hi.'], { system: 'Be brief.', maxTokens: 16, batch: false }).done;
        assert.equal(raw.results[0]!.template, 'none');
        assert.notEqual(raw.results[0]!.text, chat.results[0]!.text);
      } finally {
        await pool.close();
      }
    });
  });

  it('file: a .jinja template and a tokenizer_config.json render client-side like the server', async () => {
    await withTempDir(async (dir) => {
      await writeFile(join(dir, 'chatml.jinja'), CHATML);
      await writeFile(join(dir, 'tokenizer_config.json'), JSON.stringify({ chat_template: [{ name: 'default', template: CHATML }], bos_token: { content: '<s>' } }));
      await withServer({ reply: 'echo' }, async (server) => {
        const pool = new SwarmPool([server.endpoint]);
        try {
          const prompts = ['What is 2+2?', 'Say hi.'];
          const chat = await scatterGather(pool, prompts, { system: 'Be brief.', maxTokens: 16, batch: false }).done;
          for (const file of ['chatml.jinja', 'tokenizer_config.json']) {
            const template = await loadTemplateFile(join(dir, file));
            const batched = await scatterGather(pool, prompts, { system: 'Be brief.', maxTokens: 16, template }).done;
            assert.deepEqual(texts(batched.results), texts(chat.results), file);
            assert.ok(batched.results.every((r) => r.template === 'file'), file);
          }
          assert.equal(server.stats().httpRequests['POST /tokenize 200'], undefined, 'file templates never ask the server');
        } finally {
          await pool.close();
        }
      });
    });
  });

  it('chat_template_kwargs reach the template on both paths, and a rendering is reused only with the same ones', async () => {
    await withTempDir(async (dir) => {
      await writeFile(join(dir, 'effort.jinja'), `{% if reasoning_effort %}[effort {{ reasoning_effort }}]{% endif %}${CHATML}`);
      const template = await loadTemplateFile(join(dir, 'effort.jinja'));
      await withServer({ reply: 'echo' }, async (server) => {
        const pool = new SwarmPool([server.endpoint]);
        try {
          const extra = { chat_template_kwargs: { reasoning_effort: 'low' }, echo: true };
          const [echoed] = (await scatterGather(pool, ['Say hi.'], { maxTokens: 8, template, extra }).done).results;
          assert.match(echoed!.text, /^\[effort low\]<\|im_start\|>user\nSay hi\./);
          await scatterGather(pool, ['Say hi.'], { maxTokens: 8, template: 'server' }).done;
          await scatterGather(pool, ['Say hi.'], { maxTokens: 8, template: 'server', extra: { chat_template_kwargs: { reasoning_effort: 'low' } } }).done;
          assert.equal(server.stats().httpRequests['POST /tokenize 200'], 4, 'one skeleton (two sentinels) per set of kwargs');
        } finally {
          await pool.close();
        }
      });
    });
  });

  it('file: a template that cannot be used says which file and why', async () => {
    await withTempDir(async (dir) => {
      await writeFile(join(dir, 'broken.jinja'), '{% for m in messages %}');
      await writeFile(join(dir, 'tokenizer_config.json'), '{"bos_token": "<s>"}');
      await assert.rejects(loadTemplateFile(join(dir, 'broken.jinja')), (e) => e instanceof TemplateFileError && /broken\.jinja does not parse/.test(e.message));
      await assert.rejects(loadTemplateFile(join(dir, 'tokenizer_config.json')), /has no chat_template/);
      await assert.rejects(loadTemplateFile(join(dir, 'missing.jinja')), /cannot read chat template .*ENOENT/);
    });
  });

  it('auto: raw text with one warning where an endpoint does not render through /tokenize; server refuses it', async () => {
    const odd = await ignoringN();
    const pool = new SwarmPool([odd.endpoint]);
    try {
      const run = scatterGather(pool, ['a', 'b'], { maxTokens: 8, template: 'auto' });
      const warnings: string[] = [];
      run.on('warning', (w) => warnings.push(w));
      const report = await run.done;
      assert.ok(report.results.every((r) => r.ok && r.template === 'none'));
      assert.equal(warnings.filter((w) => /batches skip the chat template on 127\.0\.0\.1:\d+: \/tokenize does not render messages there/.test(w)).length, 1, warnings.join('\n'));
      const strict = await scatterGather(pool, ['a'], { maxTokens: 8, template: 'server' }).done;
      assert.match(strict.results[0]!.error ?? '', /does not render chat templates through \/tokenize/);
    } finally {
      await pool.close();
      await odd.close();
    }
  });

  it('the comparison records the batched arm template path (auto by default)', async () => {
    await withServer({ reply: 'echo' }, async (server) => {
      const pool = new SwarmPool([server.endpoint]);
      try {
        const comparison = await compareBatching(pool, ['x', 'y'], { maxTokens: 8, rounds: 1 }).done;
        assert.equal(comparison.template, 'skeleton');
        assert.match(comparison.templatePaths.batched, /prompts placed in the server's chat template, rendered once/);
      } finally {
        await pool.close();
      }
    });
  });
});

describe('harmony (gpt-oss) on the simulator: a templated batch reads as chat', { timeout: patience(60_000) }, () => {
  it('server-rendered batches keep the channels and split them into reasoning and answer, as chat does', async () => {
    await withServer({ reply: 'echo', chatTemplate: 'harmony' }, async (server) => {
      const pool = new SwarmPool([server.endpoint]);
      try {
        const prompts = ['What is 2+2?', 'Say hi.'];
        for (const maxTokens of [64, 10]) {
          const batched = await scatterGather(pool, prompts, { system: 'Be brief.', maxTokens, template: 'server' }).done;
          const chat = await scatterGather(pool, prompts, { system: 'Be brief.', maxTokens, batch: false }).done;
          const view = (r: (typeof chat.results)[number]) => [r.status, r.text, r.reasoning, r.finishReason];
          assert.deepEqual(batched.results.map(view), chat.results.map(view), `max_tokens ${maxTokens}`);
          assert.ok(batched.results.every((r) => r.template === 'skeleton' && r.reasoning));
        }
      } finally {
        await pool.close();
      }
    });
  });

  it('without skip_special_tokens: false the channel names run into the text (what vLLM returns by default)', async () => {
    await withServer({ reply: 'echo', chatTemplate: 'harmony' }, async (_server, origin) => {
      const json = async (path: string, body: unknown) =>
        (await fetch(origin + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
      const { tokens } = await json('/tokenize', { messages: [{ role: 'user', content: 'hi' }], add_generation_prompt: true });
      const { choices } = await json('/v1/completions', { prompt: tokens, max_tokens: 64 });
      assert.match(choices[0].text, /^analysisLet me think.*assistantfinalcompletion: hi$/);
      assert.equal(parseHarmony(choices[0].text), null, 'nothing to split reliably');
    });
  });
});

describe('harmony (gpt-oss) answers of templated batches', () => {
  const full = '<|channel|>analysis<|message|>User asks 2+2. Easy.<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>';

  it('splits analysis into reasoning and final into the answer', () => {
    assert.deepEqual(parseHarmony(full), { text: '4', reasoning: 'User asks 2+2. Easy.' });
  });

  it('cut off before the final channel: reasoning only, no answer (the chat endpoint gives content null)', () => {
    assert.deepEqual(parseHarmony('<|channel|>analysis<|message|>Thinking about'), { text: null, reasoning: 'Thinking about' });
  });

  it('text without harmony markers is left alone', () => {
    assert.equal(parseHarmony('analysisThinking.assistantfinal4'), null);
    const answer = renderedAnswer({ text: 'plain', reasoning: null, finishReason: 'stop' }, { template: 'skeleton', harmony: true });
    assert.deepEqual(answer, { text: 'plain', reasoning: null, finishReason: 'stop', template: 'skeleton' });
  });

  it('a batched answer from a harmony model reads like the chat endpoint answer, every choice too', () => {
    const answer = renderedAnswer({ text: full, reasoning: null, finishReason: 'stop', texts: [full, full.replace('>4<', '>four<')] }, { template: 'file', harmony: true });
    assert.deepEqual(answer, { text: '4', reasoning: 'User asks 2+2. Easy.', finishReason: 'stop', texts: ['4', 'four'], template: 'file' });
  });
});

describe('swarm scatter --template: bad input is one line, exit 2', { timeout: patience(60_000) }, () => {
  it('names what is wrong before any request', async () => {
    ensureBuilt();
    await withTempDir(async (dir) => {
      const prompts = join(dir, 'prompts.txt');
      await writeFile(prompts, 'one\n');
      await writeFile(join(dir, 'hosts'), '127.0.0.1\t9\n');
      // An unparsable flag gets commander's usage lines after its one line, as every flag does.
      const cases: Array<[string[], RegExp, number]> = [
        [['--template', 'jinja'], /must be server, none, auto or file:PATH/, 3],
        [['--template', `file:${join(dir, 'nope.jinja')}`], /cannot read chat template .*nope\.jinja: ENOENT/, 1],
        [['--template', 'server', '--no-batch'], /--template applies to batches/, 1],
      ];
      for (const [args, pattern, lines] of cases) {
        const r = await runCli(['scatter', '--hostfile', join(dir, 'hosts'), '--prompts', prompts, ...args]);
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr.trimEnd().split('\n').length, lines, r.stderr);
        assert.match(r.stderr.split('\n')[0]!, pattern);
        assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
      }
    });
  });
});

/**
 * The servers' `/metrics` read into the swarm's load: Prometheus text parsed (vLLM's names, odd and
 * hostile lines), and the watch a view uses while an unstreamed batch runs — against the simulator
 * over loopback, beside servers that are gone or not vLLM, and over 1,000 endpoints at bounded concurrency.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { parsePrometheusText, readVllmMetrics, scatterGather, watchServerLoad, type Endpoint, type ServerLoad } from '../src/core/index.ts';
import { Fixture, prompts } from './helpers/swarm.ts';
import { until } from './extension-host/until.ts';
import { patience } from './helpers/patience.ts';

describe('Prometheus text', () => {
  it('reads names, labels with escapes, values with exponents, infinities and timestamps; skips comments and lines it cannot read', () => {
    const text = [
      '# HELP vllm:num_requests_running Number of requests in model execution batches.',
      '# TYPE vllm:num_requests_running gauge',
      'vllm:num_requests_running{engine="0",model_name="m"} 3',
      'vllm:num_requests_running{engine="1",model_name="a \\"quoted\\" \\\\ name\\nnext"} 2.0 1732620000000',
      'vllm:e2e_request_latency_seconds_bucket{le="+Inf",model_name="m"} +Inf',
      'vllm:generation_tokens_total 1.5e3',
      'process_start_time_seconds NaN',
      '',
      'garbage line without a value',
      'broken{label="unterminated} 1',
      'no_value{a="b"}',
      '\u0000\u0001 binary',
    ].join('\n');
    const samples = parsePrometheusText(text);
    assert.deepEqual(
      samples.map((s) => [s.name, s.labels, s.value]),
      [
        ['vllm:num_requests_running', { engine: '0', model_name: 'm' }, 3],
        ['vllm:num_requests_running', { engine: '1', model_name: 'a "quoted" \\ name\nnext' }, 2],
        ['vllm:e2e_request_latency_seconds_bucket', { le: '+Inf', model_name: 'm' }, Infinity],
        ['vllm:generation_tokens_total', {}, 1500],
        ['process_start_time_seconds', {}, NaN],
      ],
    );
  });

  it('survives a huge line and CRLF line ends', () => {
    const huge = `x{a="${'y'.repeat(2_000_000)}"} 1`;
    assert.equal(parsePrometheusText(`${huge}\r\nvllm:num_requests_waiting 4\r\n`).at(-1)!.value, 4);
    assert.deepEqual(readVllmMetrics('vllm:num_requests_waiting{engine="0"} 4\r\nvllm:request_success_total{finished_reason="stop"} 7\r\nvllm:request_success_total{finished_reason="length"} 3\r\n'), {
      running: 0,
      waiting: 4,
      kvCacheUsage: null,
      finished: 10,
      generationTokens: 0,
      promptTokens: 0,
      preemptions: 0,
      prefixCacheQueries: 0,
      prefixCacheHits: 0,
    });
    assert.equal(readVllmMetrics('http_requests_total 5\n'), null, 'not a vLLM server');
  });
});

/** A server that is not vLLM: `/metrics` is a 404. */
async function notVllm(): Promise<{ server: Server; endpoint: Endpoint }> {
  const server = createServer((_req, res) => res.writeHead(404).end('{"detail":"Not Found"}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, endpoint: { host: '127.0.0.1', port: (server.address() as AddressInfo).port, tags: {} } };
}

describe('the swarm’s load while an unstreamed batch runs', { timeout: patience(120_000) }, () => {
  const fx = new Fixture();
  const servers: Server[] = [];
  after(async () => {
    await fx.close();
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });

  it('says what the servers have running and how many sequences and tokens they finished before any answer comes back; a gone or non-vLLM server is left out', async () => {
    // Two servers of 4 sequences each, 40 tokens at 100 ms a token: three waves of ~4 s behind each list —
    // long enough that readings paced by how long the last one took (seconds on a loaded machine) land inside a wave.
    const sim = await fx.sim(2, { maxNumSeqs: 4, tpotMs: 100, answerTokens: 40, reply: 'lorem' });
    const gone = await fx.sim(1);
    const goneEndpoint = gone.endpoints[0]!;
    await gone.close();
    const plain = await notVllm();
    servers.push(plain.server);
    const runPool = fx.pool(sim.endpoints);
    const watched = fx.pool([...sim.endpoints, goneEndpoint, plain.endpoint]);
    const readings: ServerLoad[] = [];
    const watch = watchServerLoad(watched, (l) => readings.push(l), { intervalMs: 100, timeoutMs: 500 });
    try {
      const run = scatterGather(runPool, prompts(24), { maxTokens: 40, stream: false, extra: { ignore_eos: true } });
      let answered = 0;
      run.on('result', () => answered++);
      const early = await until(() => readings.find((l) => l.finished === 0 && l.generationTokens > 0), 'a reading with tokens generated before any sequence finished', 30_000);
      assert.ok(early.running > 0);
      const midway = await until(() => readings.find((l) => l.finished > 0 && l.running > 0), 'a reading with sequences finished and running', 30_000);
      assert.equal(answered, 0, 'no answer has come back yet: the lists are unstreamed');
      assert.deepEqual([midway.asked, midway.answered], [4, 2], 'the gone server and the one without vLLM metrics are left out');
      assert.ok(midway.generationTokens >= 40 * midway.finished, `tokens generated (${midway.generationTokens}) for the finished sequences (${midway.finished})`);
      assert.ok(midway.running <= 8 && midway.running + midway.waiting <= 24);
      const report = await run.done;
      assert.equal(report.summary.ok, 24);
      // Counted from the first reading (100 ms in, before the first wave of 8 finished at ~4 s, its tokens partly made).
      const last = await until(() => readings.at(-1)!.running === 0 && readings.at(-1)!.finished > 0 && readings.at(-1), 'a reading after the run', 10_000);
      assert.equal(last.waiting, 0);
      assert.ok(last.finished >= 24 - 8 && last.finished <= 24, `every sequence finished since the first reading (${last.finished})`);
      assert.ok(last.generationTokens >= 16 * 40 && last.generationTokens <= 24 * 40, `their tokens (${last.generationTokens})`);
      assert.ok(readings.every((l, i) => i === 0 || l.atMs >= readings[i - 1]!.atMs), 'readings in order');
    } finally {
      watch.stop();
    }
  });

  it('reads 1,000 endpoints with at most `concurrency` scrapes in flight, never two readings at once, and stops', async () => {
    let inFlight = 0;
    let most = 0;
    let scrapes = 0;
    const endpoints: Endpoint[] = [];
    // Only this pool's requests are counted: 1,000 fresh ports are bound here while other test files
    // (and another run beside this one) still ask ports they had and closed, and one of those asking
    // here made 17 "at once" with 16 of ours.
    const key = randomUUID();
    for (let i = 0; i < 1_000; i++) {
      const server = createServer((req, res) => {
        if (req.headers.authorization !== `Bearer ${key}`) return void res.writeHead(401).end();
        scrapes++;
        most = Math.max(most, ++inFlight);
        // A slow answer, so that scrapes overlap if anything lets them.
        setTimeout(() => {
          inFlight--;
          // Server i runs i mod 10 sequences and its KV cache is (i mod 100) % full: the reading's bands are known.
          res.end(`vllm:num_requests_running{engine="0"} ${i % 10}\nvllm:num_requests_waiting{engine="0"} 2\nvllm:kv_cache_usage_perc{engine="0"} ${(i % 100) / 100}\nvllm:request_success_total 5\nvllm:generation_tokens_total 100\nvllm:num_preemptions_total 3\n`);
        }, 5);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      servers.push(server);
      endpoints.push({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, tags: {} });
    }
    const pool = fx.pool(endpoints, { apiKey: key });
    const readings: ServerLoad[] = [];
    // An interval far shorter than a reading: the next reading still waits for this one (and as long again).
    // No scrape is given up on: one past its deadline (2 s by default, passed at load 15 with these 1,000
    // servers in this process) leaves its server holding a request the client no longer counts.
    const watch = watchServerLoad(pool, (l) => readings.push(l), { intervalMs: 20, concurrency: 16, sample: 1_000, timeoutMs: 600_000 });
    await until(() => readings.length >= 2, 'two readings of 1,000 endpoints', 60_000);
    watch.stop();
    const after = scrapes;
    assert.ok(most <= 16, `at most 16 scrapes at once (${most})`);
    assert.ok(scrapes <= 1_000 * (readings.length + 1), `no reading overlapped another (${scrapes} scrapes, ${readings.length} readings)`);
    const { runningBand, kvCacheUsage, ...sums } = readings[0]!;
    assert.deepEqual(
      { ...sums, atMs: 0 },
      { answered: 1_000, asked: 1_000, endpoints: 1_000, running: 4_500, waiting: 2_000, finished: 0, generationTokens: 0, preemptions: 0, prefixCacheQueries: 0, prefixCacheHits: 0, waitingBand: { median: 2, p90: 2, max: 2 }, atMs: 0 },
      'summed; counters start from the first reading',
    );
    // 1,000 servers as one band each: the running counts 0..9, a hundred of each (numpy's linear percentiles: 4.5 and 8.1).
    assert.deepEqual([runningBand!.median, runningBand!.max], [4.5, 9]);
    assert.ok(Math.abs(runningBand!.p90 - 8.1) < 1e-9, `p90 ${runningBand!.p90}`);
    assert.ok(Math.abs(kvCacheUsage!.median - 0.495) < 1e-9 && Math.abs(kvCacheUsage!.p90 - 0.891) < 1e-9 && kvCacheUsage!.max === 0.99, JSON.stringify(kvCacheUsage));
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(scrapes - after <= 16, 'no new scrapes after stop (only those already in flight)');
    assert.equal(watch.latest, readings.at(-1));
  });
  it('reads a sample of 1,000 endpoints, the same ones each reading, and scales its sums to the swarm', async () => {
    const scrapedBy = new Map<number, number>();
    const endpoints: Endpoint[] = [];
    for (let i = 0; i < 1_000; i++) {
      // Every server runs 3 and queues 1; its token counter grows by 10 at each scrape of it.
      const server = createServer((req, res) => {
        // Only scrapes count: with 1,000 ports open, a request another test sends to a port it took for closed may land here.
        if (req.url !== '/metrics') return void res.writeHead(404).end();
        const n = (scrapedBy.get(i) ?? 0) + 1;
        scrapedBy.set(i, n);
        res.end(`vllm:num_requests_running 3\nvllm:num_requests_waiting 1\nvllm:generation_tokens_total ${10 * n}\n`);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      servers.push(server);
      endpoints.push({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, tags: {} });
    }
    const readings: ServerLoad[] = [];
    const watch = watchServerLoad(fx.pool(endpoints), (l) => readings.push(l), { intervalMs: 20, concurrency: 16, sample: 50 });
    await until(() => readings.length >= 3, 'three readings of a sample of 1,000 endpoints', 60_000);
    watch.stop();
    const third = readings[2]!;
    assert.equal(scrapedBy.size, 50, 'the same 50 servers every reading');
    assert.ok([...scrapedBy.values()].every((n) => n >= 3), 'each read every time');
    assert.deepEqual([third.asked, third.answered, third.endpoints], [50, 50, 1_000]);
    assert.deepEqual([third.running, third.waiting], [3_000, 1_000], 'scaled by 1,000 ÷ 50');
    assert.equal(third.generationTokens, 20 * 50 * 20, 'two scrapes since the first, 10 tokens each, on 50 servers, scaled');
    assert.deepEqual(third.runningBand, { median: 3, p90: 3, max: 3 }, 'the bands are the sample\'s');
  });
});

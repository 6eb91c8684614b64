import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { meetsSlo, parseSlo, type ClientOverhead, type PromptResult, type ServerLoad } from '../src/core/index.ts';
import { runCli, suiteSim } from './helpers/cli.ts';

// `swarm load` against real simulated servers over loopback; every check reads counts or the rows' own timings.

const rows = async (path: string): Promise<PromptResult[]> => (await readFile(path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as PromptResult);
const record = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as { kind: string; summary: { prompts: number; ok: number; goodput?: { good: number; perSecond: number }; wallMs: number }; client: ClientOverhead; servers: ServerLoad[] };

describe('swarm load', () => {
  const suite = suiteSim('load.hostfile', 2, ['--ttft-ms', '20', '--tpot-ms', '2']);

  it('constant arrivals: exactly the requests due within the duration, in arrival order, each held to --output-len', async () => {
    const out = join(suite.dir, 'constant.jsonl');
    // 40 req/s for 1 s: arrivals at 25, 50, …, 975 ms — 39 of them.
    const r = await runCli(['load', '--hostfile', suite.sim.hostfile, '--duration', '1', '--request-rate', '40', '--arrivals', 'constant', '--input-len', '30', '--output-len', '7', '--out', out, '--quiet'], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    const got = await rows(out);
    assert.equal(got.length, 39);
    assert.deepEqual(got.map((x) => x.index), [...got.keys()]);
    assert.ok(got.every((x) => x.ok && x.completionTokens === 7), 'ignore_eos holds every answer to its length');
    // Round-robin across the two endpoints, request i on endpoint i mod 2.
    assert.equal(new Set(got.filter((x) => x.index % 2 === 0).map((x) => x.endpoint)).size, 1);
    assert.equal(new Set(got.map((x) => x.endpoint)).size, 2);
    const rec = await record(`${out}.run.json`);
    assert.equal(rec.kind, 'sustained-load');
    assert.equal(rec.summary.prompts, 39);
  });

  it('goodput counts the requests meeting every SLO, per second of wall time, as the rows themselves say', async () => {
    const out = join(suite.dir, 'goodput.jsonl');
    const slo = 'ttft=25,e2el=1000000';
    const r = await runCli(['load', '--hostfile', suite.sim.hostfile, '--duration', '1', '--request-rate', '30', '--input-len', '20', '--output-len', '5', '--range-ratio', '0.5', '--slo', slo, '--out', out], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    const got = await rows(out);
    const rec = await record(`${out}.run.json`);
    const good = got.filter((x) => meetsSlo(x, parseSlo(slo))).length;
    assert.equal(rec.summary.goodput!.good, good);
    assert.ok(Math.abs(rec.summary.goodput!.perSecond - good / (rec.summary.wallMs / 1000)) < 1e-9);
    assert.match(r.stderr, new RegExp(`goodput .*\\(${good} of ${got.length} ok requests within ttft ≤ 25 ms · e2el ≤ 1000000 ms\\)`));
    // The client's self-check: its CPU over the requests it sent, in the summary and the record; the servers' readings beside it.
    assert.equal(rec.client.requests, got.length);
    assert.ok(rec.client.cpuMs > 0 && rec.client.eventLoopBusy > 0 && rec.client.eventLoopBusy <= 1, JSON.stringify(rec.client));
    assert.match(r.stderr, new RegExp(`^client: [\\d.]+ ms CPU per request \\([\\d,]+ ms over ${got.length} requests\\), event loop \\d+ % busy$`, 'm'));
    assert.ok(Array.isArray(rec.servers) && rec.servers.every((l) => l.asked === 2), 'each reading asked both servers');
    // --range-ratio 0.5 around 5: lengths 2 … 8, and more than one of them.
    const lengths = new Set(got.map((x) => x.completionTokens));
    assert.ok([...lengths].every((n) => n! >= 2 && n! <= 8) && lengths.size > 1, [...lengths].join(','));
  });

  it('an SLO no request meets gives goodput 0; one every request meets gives goodput = throughput', async () => {
    for (const [slo, all] of [['ttft=0.001', false], ['e2el=600000', true]] as const) {
      const out = join(suite.dir, `slo-${all}.jsonl`);
      const r = await runCli(['load', '--hostfile', suite.sim.hostfile, '--duration', '0.5', '--concurrency', '3', '--input-len', '10', '--output-len', '3', '--slo', slo, '--out', out, '--quiet'], { timeoutMs: 30_000 });
      assert.equal(r.code, 0, r.stderr);
      const rec = await record(`${out}.run.json`);
      assert.equal(rec.summary.goodput!.good, all ? rec.summary.ok : 0);
    }
  });

  it('closed loop: never more than --concurrency in flight, and more requests than that over the duration', async () => {
    const out = join(suite.dir, 'closed.jsonl');
    const r = await runCli(['load', '--hostfile', suite.sim.hostfile, '--duration', '1', '--concurrency', '4', '--input-len', '10', '--output-len', '10', '--out', out, '--quiet'], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    const got = await rows(out);
    assert.ok(got.length > 4, String(got.length));
    const edges = got.flatMap((x) => [[x.timings.sentMs!, 1], [x.timings.doneMs, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    let peak = 0;
    for (const [, d] of edges) peak = Math.max(peak, (now += d));
    assert.ok(peak <= 4 && peak >= 2, `peak ${peak}`);
  });

  it('bad input is one line and exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--slo', 'ttft=abc'], /ttft must be a positive number/],
      [['--slo', 'latency=5'], /expected ttft=MS, tpot=MS or e2el=MS/],
      [['--route', 'least-load'], /--route least-load: a load run/],
      [['--prompts', 'p.txt'], /give one of --prompts FILE and --input-len N/],
    ];
    for (const [extra, message] of cases) {
      const r = await runCli(['load', '--hostfile', suite.sim.hostfile, '--duration', '1', '--input-len', '5', ...extra]);
      assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
  });
});

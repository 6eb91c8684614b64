import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { ClientOverhead, RunSummary, ServerLoad, SweepRow } from '../src/core/index.ts';
import { runCli, startSim, suiteSim } from './helpers/cli.ts';

// `swarm run FILE.swarm.yaml` against real simulated servers; checks read counts, files and the sweep's shape.

describe('swarm run (experiment files)', () => {
  const suite = suiteSim('exp.hostfile', 3, ['--max-num-seqs', '4']);

  const experiment = async (name: string, yaml: string): Promise<string> => {
    const path = join(suite.dir, name);
    await writeFile(path, yaml.replaceAll('HOSTFILE', suite.sim.hostfile));
    return path;
  };
  const sweep = async (out: string) => JSON.parse(await readFile(join(out, 'sweep.json'), 'utf8')) as { parameter: string; metric: string; rows: SweepRow[] };

  it('a list-length sweep of both arms: one run per value, arm and repetition, each with list length × endpoints prompts; one table; the file saved with them', async () => {
    const yaml = [
      '# list lengths against wall time',
      'endpoints: {hostfile: HOSTFILE}',
      'prompts: ["one", "two", "three"]',
      'pattern: scatter',
      'sampling: {max_tokens: 4}',
      'compare: [batched, individual]',
      'repetitions: 2',
      'sweep: {parameter: list_length, values: [2, 5]}',
    ].join('\n');
    const file = await experiment('lists.swarm.yaml', yaml);
    const out = join(suite.dir, 'lists.out');
    const r = await runCli(['run', file, '--out', out, '--quiet'], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await readFile(join(out, 'lists.swarm.yaml'), 'utf8'), await readFile(file, 'utf8'), 'the file the runs came from, byte for byte');
    const table = await sweep(out);
    assert.equal(table.parameter, 'list_length');
    assert.deepEqual(table.rows.map((row) => [row.value, row.arm, row.runs]), [[2, 'batched', 2], [2, 'individual', 2], [5, 'batched', 2], [5, 'individual', 2]]);
    for (const row of table.rows) {
      const s = row.metrics.wall_s!;
      assert.ok(s.n === 2 && s.q1 <= s.median && s.median <= s.q3, JSON.stringify(s));
    }
    const runs = (await readdir(join(out, 'runs'))).filter((f) => f.endsWith('.json')).sort();
    assert.equal(runs.length, 8);
    for (const name of runs) {
      const { point, summary } = JSON.parse(await readFile(join(out, 'runs', name), 'utf8')) as { point: { value: number; arm: string }; summary: RunSummary };
      assert.equal(summary.prompts, point.value * 3);
      assert.equal(summary.ok, summary.prompts);
      // Batched: one list per endpoint; individual: a request per prompt.
      assert.equal(summary.generationRequests, point.arm === 'batched' ? 3 : point.value * 3);
      const rows = (await readFile(join(out, 'runs', name.replace(/\.json$/, '.jsonl')), 'utf8')).trim().split('\n');
      assert.equal(rows.length, summary.prompts);
    }
    assert.match(r.stdout, /^list_length\s+arm\s+wall_s median\s+IQR \(q1 – q3\)\s+runs$/m);
    assert.equal((await readFile(join(out, 'sweep.csv'), 'utf8')).split('\n')[0], 'list_length,arm,metric,median,q1,q3,n');
  });

  it('an endpoint-count sweep runs on that many endpoints; a request-rate sweep of a load pattern reports goodput', async () => {
    const file = await experiment('endpoints.swarm.yaml', 'endpoints: {hostfile: HOSTFILE}\nprompts: {count: 12, input_len: 8}\nsampling: {max_tokens: 3}\nsweep: {parameter: endpoints, values: [1, 3]}\n');
    const out = join(suite.dir, 'endpoints.out');
    const r = await runCli(['run', file, '--out', out, '--quiet'], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    for (const n of [1, 3]) {
      const { summary } = JSON.parse(await readFile(join(out, 'runs', `${n}-batched-1.json`), 'utf8')) as { summary: RunSummary };
      assert.equal(summary.endpoints.filter((e) => e.prompts > 0).length, n);
    }
    const load = await experiment('rate.swarm.yaml', 'endpoints: {hostfile: HOSTFILE}\nprompts: {count: 5, input_len: 8}\npattern: load\nparams: {duration: 0.4, output_len: 3, slo: "e2el=600000", arrivals: constant}\nsweep: {parameter: request_rate, values: [10, 20]}\n');
    const loadOut = join(suite.dir, 'rate.out');
    const l = await runCli(['run', load, '--out', loadOut, '--quiet'], { timeoutMs: 60_000 });
    assert.equal(l.code, 0, l.stderr);
    const table = await sweep(loadOut);
    assert.equal(table.metric, 'goodput');
    for (const [n, v] of [[3, 10], [7, 20]] as const) {
      // Constant arrivals inside 0.4 s: 3 at 10 req/s, 7 at 20 req/s; every one within an SLO of 10 minutes.
      const { summary } = JSON.parse(await readFile(join(loadOut, 'runs', `${v}-load-1.json`), 'utf8')) as { summary: RunSummary };
      assert.equal(summary.prompts, n);
      assert.equal(summary.goodput!.good, n);
    }
  });

  it('a streamed concurrency sweep: each run keeps the servers\' readings and the client\'s own cost; the planner, fitted on the first run, sits beside every run', async () => {
    // Paced servers (50 ms a token, 4 sequences each): a run lasts seconds, so the servers are read during it.
    const sim = await startSim(suite.dir, 'paced.hostfile', 2, ['--max-num-seqs', '4', '--tpot-ms', '50', '--reply', 'lorem']);
    try {
      const file = await experiment('paced.swarm.yaml', `endpoints: {hostfile: ${sim.hostfile}, max_num_seqs: 4}\nprompts: {count: 24, input_len: 30}\nparams: {batch: false, stream: true}\nsampling: {max_tokens: 16}\nsweep: {parameter: concurrency, values: [4, 8]}\n`);
      const out = join(suite.dir, 'paced.out');
      const r = await runCli(['run', file, '--out', out], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^client: [\d.]+ ms CPU per request \([\d,]+ ms over 24 requests\), event loop \d+ % busy$/m);
      for (const v of [4, 8]) {
        const rec = JSON.parse(await readFile(join(out, 'runs', `${v}-individual-1.json`), 'utf8')) as { summary: RunSummary; client: ClientOverhead; servers: ServerLoad[]; scenario: { inFlight: number } };
        assert.equal(rec.scenario.inFlight, v);
        assert.equal(rec.client.requests, 24);
        assert.ok(rec.client.cpuMs > 0 && rec.client.cpuPerRequestMs === rec.client.cpuMs / 24 && rec.client.eventLoopBusy > 0 && rec.client.eventLoopBusy <= 1, JSON.stringify(rec.client));
        assert.ok(rec.servers.length >= 1, 'read at least once during a run of seconds');
        for (const load of rec.servers) {
          assert.deepEqual([load.asked, load.answered], [2, 2]);
          assert.ok(load.running <= v && load.runningBand!.max <= 4, `at most ${v} running, at most 4 on a server: ${JSON.stringify(load)}`);
          assert.ok(load.kvCacheUsage!.median >= 0 && load.kvCacheUsage!.max <= 1);
        }
        assert.ok(rec.servers.some((l) => l.running > 0), 'some reading saw sequences running');
      }
      const { plan } = JSON.parse(await readFile(join(out, 'sweep.json'), 'utf8')) as { plan: { fittedOn: string; model: { maxNumSeqs: number }; rows: Array<{ value: number; predictedMs: number; measuredMs: number; fitted: boolean }> } };
      assert.equal(plan.fittedOn, '4-individual-1');
      assert.equal(plan.model.maxNumSeqs, 4);
      assert.deepEqual(plan.rows.map((row) => [row.value, row.fitted]), [[4, true], [8, false]]);
      for (const row of plan.rows) assert.ok(row.predictedMs > 0 && row.measuredMs > 0);
      assert.match(r.stdout, /^planner fitted on 4-individual-1 \(step [\d.]+ ms/m);
      assert.match(r.stdout, /^4 individual #1 \(fitted\)\s+[\d.]+ s\s+[\d.]+ s\s+-?[\d.]+ %$/m);
      assert.match(r.stdout, /^8 individual #1\s+[\d.]+ s\s+[\d.]+ s\s+-?[\d.]+ %$/m);
    } finally {
      await sim.stop();
    }
  });

  it('a bad file is exit 2, every problem named by file and key, before anything is sent', async () => {
    const file = await experiment('bad.swarm.yaml', 'endpoints: {hostfile: HOSTFILE}\nprompts: {count: 0, input_len: 5}\nparams: {bogus: 1, slo: "x=1"}\ncompare: [batched, sideways]\nsweep: {parameter: list_length, values: []}\nrepetitions: 0\n');
    const r = await runCli(['run', file]);
    assert.equal(r.code, 2, r.stderr);
    for (const key of ['prompts.count', 'params.bogus', 'params.slo', 'compare', 'sweep.values', 'repetitions']) assert.match(r.stderr, new RegExp(`bad\\.swarm\\.yaml: ${key.replace('.', '\\.')}: `), key);
    const tooMany = await experiment('many.swarm.yaml', 'endpoints: {hostfile: HOSTFILE}\nprompts: ["x"]\nsweep: {parameter: endpoints, values: [2, 9]}\n');
    const m = await runCli(['run', tooMany, '--out', join(suite.dir, 'many.out')]);
    assert.equal(m.code, 2, m.stderr);
    assert.match(m.stderr, /many\.swarm\.yaml: sweep\.values: 9 endpoints asked for, .* has 3/);
    assert.equal(existsSync(join(suite.dir, 'many.out')), false, 'bad input leaves no folder behind');
    const notYaml = await experiment('broken.swarm.yaml', 'endpoints: [\n');
    const b = await runCli(['run', notYaml]);
    assert.equal(b.code, 2);
    assert.match(b.stderr, /broken\.swarm\.yaml: not valid YAML/);
  });
});

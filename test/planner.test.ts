import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { fitLatencyModel, predictWall, type PromptResult } from '../src/core/index.ts';
import { runCli, startSim, suiteDir, type Sim } from './helpers/cli.ts';

// The capacity planner against the simulator's vLLM scheduler: fitted on one streamed run's timings,
// it predicts other sizes, checked against the servers' own modeled time (no clock is read here).
// --slow-factor 4 paces the modeled GPU four times slower than modeled, so a loaded machine's lag is a
// small part of each step; the modeled time is then multiplied by the same four.

const SLOW = 4;
const MAX_NUM_SEQS = 8;

/** Modeled engine time so far of each endpoint, seconds. */
async function modeledBusy(sim: Sim): Promise<number[]> {
  return Promise.all(
    sim.endpoints.map(async (ep) => {
      const text = await (await request(`http://${ep}/metrics`)).body.text();
      return Number(/^swarm_sim:modeled_busy_seconds_total(?:\{[^}]*\})? (\S+)$/m.exec(text)![1]);
    }),
  );
}

const rows = async (path: string): Promise<PromptResult[]> => (await readFile(path, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as PromptResult);

describe('swarm plan', () => {
  const suite = suiteDir();

  it('fitted on one streamed run, predicts three batched runs of other sizes: the servers\' part of each prediction within 30 % of their modeled makespan', async (t) => {
    const sim = await startSim(suite.dir, 'plan.hostfile', 4, ['--scheduler', 'vllm', '--gpu', 'l40s', '--max-num-seqs', String(MAX_NUM_SEQS), '--slow-factor', String(SLOW)], {}, 20_000);
    // Prompts of 60–140 words, as many tokens in the simulated tokenizer.
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const prompts = Array.from({ length: 96 }, (_, i) => `Prompt ${i}: ${Array.from({ length: 60 + Math.floor(random() * 80) }, () => 'abcdefghij'.split('').sort(() => random() - 0.5).slice(0, 4).join('')).join(' ')}`);
    const file = (n: number) => join(suite.dir, `p${n}.txt`);
    for (const n of [48, 64, 96]) await writeFile(file(n), prompts.slice(0, n).join('\n'));
    const hostfile = async (k: number) => {
      const path = join(suite.dir, `plan-${k}.hostfile`);
      await writeFile(path, `${sim.lines.slice(0, k).join('\n')}\n`);
      return path;
    };
    const fitOut = join(suite.dir, 'fit.jsonl');
    const fitted = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', file(64), '--no-batch', '--stream', '--max-tokens', '24', '--concurrency', '32', '--out', fitOut, '--quiet'], { timeoutMs: 120_000 });
    assert.equal(fitted.code, 0, fitted.stderr);
    const model = fitLatencyModel(await rows(fitOut), MAX_NUM_SEQS);
    assert.equal(model.fittedOn.requests, 64);
    assert.equal(model.fittedOn.endpoints, 4);

    const report: string[] = [];
    for (const [endpoints, n] of [[4, 64], [2, 48], [3, 96]] as const) {
      const before = await modeledBusy(sim);
      const r = await runCli(['scatter', '--hostfile', await hostfile(endpoints), '--prompts', file(n), '--max-tokens', '24', '--out', join(suite.dir, `m${endpoints}-${n}.jsonl`), '--quiet'], { timeoutMs: 120_000 });
      assert.equal(r.code, 0, r.stderr);
      const after = await modeledBusy(sim);
      // A batched run keeps each engine busy from its list's arrival to its last answer: the busiest one's modeled time is the run's makespan.
      const modeledMs = Math.max(...after.map((a, i) => a - before[i]!)) * 1000 * SLOW;
      const predicted = predictWall(model, { endpoints, prompts: n, inFlight: endpoints, batched: true });
      assert.equal(predicted.perEndpoint, Math.ceil(n / endpoints));
      assert.equal(predicted.running, MAX_NUM_SEQS);
      // The model's overhead is the client's and the wire's, which the engines' modeled time leaves out; the
      // fit's steps carry the machine's lag, so the bound is loose (`npm run bench` prints the figures).
      const servers = predicted.wallMs - model.overheadMs;
      report.push(`${endpoints} × ${n}: predicted ${(predicted.wallMs / 1000).toFixed(2)} s (servers ${(servers / 1000).toFixed(2)} s), modeled ${(modeledMs / 1000).toFixed(2)} s`);
      assert.ok(Math.abs(servers - modeledMs) <= 0.3 * modeledMs, report.join('; '));
    }
    t.diagnostic(report.join('; '));
    await sim.stop();
  });

  it('swarm plan prints the model, a table and the endpoints for a deadline; bad input is exit 2', async () => {
    const sim = await startSim(suite.dir, 'plan-cli.hostfile', 2, ['--scheduler', 'vllm', '--max-num-seqs', '4', '--slow-factor', '1']);
    const out = join(suite.dir, 'load.jsonl');
    const load = await runCli(['load', '--hostfile', sim.hostfile, '--duration', '1', '--request-rate', '20', '--input-len', '40', '--output-len', '12', '--range-ratio', '0.5', '--out', out, '--quiet'], { timeoutMs: 60_000 });
    assert.equal(load.code, 0, load.stderr);
    const r = await runCli(['plan', out, '--max-num-seqs', '4', '--endpoints', '1,8', '--prompts', '100,1000', '--deadline', '60']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^fitted on \d+ streamed requests over 2 endpoint\(s\)/m);
    assert.match(r.stdout, /engine step +[\d.]+ ms \+ [\d.]+ ms per running sequence \(max-num-seqs 4\)/);
    // Four predictions, 1 and 8 endpoints × 100 and 1,000 prompts, with each endpoint's share.
    for (const [e, n, per] of [[1, 100, 100], [1, '1,000', '1,000'], [8, 100, 13], [8, '1,000', 125]]) assert.match(r.stdout, new RegExp(`^${e}\\s+${n}\\s+individual\\s+\\S+\\s+${per}\\s`, 'm'));
    assert.match(r.stdout, /^1,000 prompts within 60 s: [\d,]+ endpoint\(s\) \(predicted [\d.]+ s\)$/m);
    const json = JSON.parse((await runCli(['plan', out, '--max-num-seqs', '4', '--batched', '--endpoints', '2', '--prompts', '40', '--json'])).stdout) as { predictions: Array<{ perEndpoint: number; running: number }> };
    assert.deepEqual(json.predictions.map((p) => [p.perEndpoint, p.running]), [[20, 4]]);
    await sim.stop();
    const unstreamed = join(suite.dir, 'plain.jsonl');
    await writeFile(unstreamed, `${JSON.stringify({ index: 0, prompt: 'x', ok: true, status: 'ok', endpoint: 'a:1', promptTokens: 1, completionTokens: 2, timings: { queuedMs: 0, sentMs: 0, firstByteMs: 1, firstTokenMs: null, doneMs: 2 } })}\n`);
    for (const [args, message] of [
      [[unstreamed, '--max-num-seqs', '4'], /plain\.jsonl: 0 usable requests: the fit needs at least 8 answered, streamed requests/],
      [[join(suite.dir, 'none.jsonl'), '--max-num-seqs', '4'], /none\.jsonl: cannot read it \(ENOENT\)/],
      [[out, '--max-num-seqs', '4', '--batched', '--concurrency', '8'], /--concurrency applies to individual requests/],
      [[out], /required option '--max-num-seqs <k>'/],
    ] as const) {
      const bad = await runCli(['plan', ...args]);
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, message);
    }
  });
});

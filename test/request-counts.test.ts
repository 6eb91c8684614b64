/**
 * What a templated batch costs on the wire, counted by the servers themselves (vLLM's
 * `http_requests_total` in /metrics, as prometheus-fastapi-instrumentator exposes it), never by the
 * client: the number `swarm scatter` prints must be theirs, and preparation costs per endpoint, not
 * per prompt.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, jsonLines, killAll, runCli, startSim, tempDir, writeText } from './helpers/cli.ts';
import { patience } from './helpers/patience.ts';

/** Every server's http_requests_total, summed by handler (unmatched routes are vLLM's handler "none"), and the answered (2xx) generation requests. */
async function serverCounts(hostfile: string): Promise<{ byHandler: Map<string, number>; generated: number }> {
  const ports = (await readFile(hostfile, 'utf8')).trim().split('\n').map((line) => line.split('\t')[1]!);
  const byHandler = new Map<string, number>();
  let generated = 0;
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const line of text.split('\n')) {
      const m = /^http_requests_total\{handler="([^"]+)",method="\w+",status="(\w+)"\} ([\d.]+)$/.exec(line);
      if (!m) continue;
      byHandler.set(m[1]!, (byHandler.get(m[1]!) ?? 0) + Number(m[3]));
      if (m[2] === '2xx' && (m[1] === '/v1/completions' || m[1] === '/v1/chat/completions/batch')) generated += Number(m[3]);
    }
  }
  return { byHandler, generated };
}

/** `HTTP requests  4,012 (/v1/completions 8 · /tokenize 2 · …)` of the CLI's summary, as numbers. */
function printed(stderr: string): { total: number; byPath: Map<string, number> } {
  const line = stderr.split('\n').find((l) => /^\s+HTTP requests\s/.test(l));
  assert.ok(line, stderr);
  const num = (s: string) => Number(s.replaceAll(',', ''));
  const total = num(/HTTP requests\s+([\d,]+)/.exec(line)![1]!);
  const byPath = new Map([...line.matchAll(/(\/[\w/.-]+(?: \(probe\))?) ([\d,]+)/g)].map((m) => [m[1]!, num(m[2]!)]));
  return { total, byPath };
}

describe('a templated batch costs requests per endpoint, counted by the servers', { timeout: patience(120_000) }, () => {
  before(ensureBuilt);
  after(killAll);

  for (const version of ['0.15', '0.31']) {
    it(`4,000 distinct prompts over 4 endpoints of vLLM ${version}: the printed count is the servers', at most 3 non-generation requests per endpoint`, async () => {
      const { dir, cleanup } = await tempDir();
      const sim = await startSim(dir, 'hosts', 4, ['--vllm-version', version, '--reply', 'lorem', '--answer-tokens', '8']);
      try {
        const prompts = await writeText(dir, 'p.txt', Array.from({ length: 4000 }, (_, i) => `distinct prompt ${i}`).join('\n') + '\n');
        const out = `${dir}/out.jsonl`;
        const r = await runCli(['scatter', '--hostfile', sim.hostfile, '--prompts', prompts, '--out', out], { timeoutMs: 60_000 });
        assert.equal(r.code, 0, r.stderr);
        const rows = jsonLines(await readFile(out, 'utf8'));
        assert.equal(rows.length, 4000);
        const { byHandler: servers, generated } = await serverCounts(sim.hostfile);
        const { total, byPath } = printed(r.stderr);
        const theirs = [...servers.values()].reduce((a, b) => a + b, 0);
        assert.equal(total, theirs, `printed ${total}, the servers counted ${JSON.stringify(Object.fromEntries(servers))}`);
        // The servers' own handler names; an unserved route (the batch chat endpoint before 0.19) is "none".
        // A probe of a route is counted apart by us (it generates nothing), under the route by the server.
        const handler = (path: string) => path.replace(/ \(probe\)$/, '');
        const ours = new Map<string, number>();
        for (const [path, n] of byPath) {
          const key = servers.has(handler(path)) ? handler(path) : 'none';
          ours.set(key, (ours.get(key) ?? 0) + n);
        }
        assert.deepEqual(new Map([...ours].sort()), new Map([...servers].sort()));
        assert.equal(generated, 4, 'one list per endpoint');
        // Model lookups, the probe of the batch chat endpoint, the template's sentinels: per endpoint or per model, never per prompt.
        assert.ok(theirs - generated <= 3 * 4, `${theirs - generated} requests besides generation for 4 endpoints`);
        if (version === '0.31') {
          assert.deepEqual(rows.map((row) => row.template).filter((t) => t !== 'chat-batch'), []);
          assert.equal(servers.get('/tokenize'), undefined, 'nothing to render');
        } else {
          assert.ok(rows.every((row) => row.template === 'skeleton'));
          assert.equal(servers.get('/tokenize'), 2, 'two sentinels, once for the swarm');
        }
      } finally {
        await sim.stop();
        await cleanup();
      }
    });
  }
});

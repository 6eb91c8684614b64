import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { childEnv, median } from '../../core/index.ts';
import { measureSwarm, procCpuMs } from './bench-process.ts';
import type { Say } from './bench-sim.ts';

const PROMPTS = 2_000;
const SERVERS = 4;
const MAX_TOKENS = 16;
const ROUNDS = 3;
const NEEDS = 'aiohttp, openai, pytest and pytest-asyncio';

/** Aurora-Swarm's own mock vLLM servers (tests/conftest.py), SERVERS of them in one process; prints their ports. */
const MOCK_SERVERS = `
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])
from tests.conftest import _start_mock_vllm_server
async def main():
    ports = [(await _start_mock_vllm_server("127.0.0.1", 0))[1] for _ in range(int(sys.argv[2]))]
    print(json.dumps(ports), flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
`;

/** Aurora-Swarm's scatter_gather on a VLLMPool, results written as JSONL, every prompt answered. */
const CLIENT = `
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])
from aurora_swarm import VLLMPool, parse_hostfile
from aurora_swarm.patterns.scatter_gather import scatter_gather
async def main(hostfile, prompts_file, out, mode, max_tokens):
    prompts = [line for line in open(prompts_file).read().splitlines() if line.strip()]
    pool = VLLMPool(parse_hostfile(hostfile), model="mock-model", max_tokens=int(max_tokens), use_batch=mode == "batched")
    try:
        results = await scatter_gather(pool, prompts)
    finally:
        await pool.close()
    with open(out, "w") as f:
        for i, r in enumerate(results):
            f.write(json.dumps({"index": i, "prompt": prompts[i], "ok": r.success, "text": r.text, "error": r.error}) + "\\n")
    if len(results) != len(prompts) or not all(r.success for r in results):
        sys.exit("lost prompts")
asyncio.run(main(*sys.argv[2:]))
`;

/**
 * Prompts per second against the original: Swarm Lab's `swarm scatter` and Aurora-Swarm's
 * scatter_gather, each a cold whole process (start-up, 2,000 prompts, results to a file, exit) against
 * Aurora-Swarm's own mock servers. Aurora-Swarm carries no license, so it is never vendored: the
 * bench uses a checkout named by AURORA_SWARM_DIR and a python (AURORA_SWARM_PYTHON) that has its
 * test dependencies, and otherwise says how to enable it.
 */
export async function originalBench(say: Say): Promise<void> {
  say();
  const dir = process.env.AURORA_SWARM_DIR;
  const python = process.env.AURORA_SWARM_PYTHON ?? 'python3';
  const enable = `set AURORA_SWARM_DIR to an Aurora-Swarm checkout and AURORA_SWARM_PYTHON to a python3 with ${NEEDS}`;
  if (!dir) return say(`against Aurora-Swarm: skipped (${enable})`);
  const probe = spawnSync(python, ['-c', 'import aiohttp, openai, pytest, pytest_asyncio, aurora_swarm'], { cwd: dir, env: childEnv(), encoding: 'utf8' });
  if (probe.status !== 0) {
    return say(`against Aurora-Swarm: skipped (${python} cannot import its dependencies in ${dir}: ${(probe.stderr || String(probe.error)).trim().split('\n').at(-1)}; ${enable})`);
  }
  const work = await mkdtemp(join(tmpdir(), 'swarm-bench-aurora-'));
  const mocks = spawn(python, ['-c', MOCK_SERVERS, dir, String(SERVERS)], { stdio: ['ignore', 'pipe', 'inherit'], env: childEnv() });
  try {
    const ports = await firstLine(mocks);
    const hostfile = join(work, 'hosts.txt');
    const prompts = join(work, 'prompts.txt');
    await writeFile(hostfile, ports.map((p) => `127.0.0.1\t${p}\n`).join(''));
    await writeFile(prompts, Array.from({ length: PROMPTS }, (_, i) => `Prompt ${i}: say something about ${i}.\n`).join(''));
    const out = join(work, 'out.jsonl');
    const contenders: Record<string, (batched: boolean) => Promise<number>> = {
      'Swarm Lab': async (batched) =>
        (await measureSwarm(['scatter', '--hostfile', hostfile, '--prompts', prompts, '--out', out, '--quiet', '--max-tokens', String(MAX_TOKENS), ...(batched ? [] : ['--no-batch'])])).wallMs,
      'Aurora-Swarm': (batched) => pythonWall(python, [CLIENT, dir, hostfile, prompts, out, batched ? 'batched' : 'individual', String(MAX_TOKENS)]),
    };
    say(`against Aurora-Swarm (${dir}): ${PROMPTS.toLocaleString('en-US')} prompts over its own ${SERVERS} mock vLLM servers (tests/conftest.py), each client a cold whole process writing a results file; medians of ${ROUNDS} alternating rounds`);
    for (const batched of [true, false]) {
      const walls = new Map<string, number[]>(Object.keys(contenders).map((n) => [n, []]));
      // The mock servers' share of each run's wall: near 100 % of a core, they set the pace.
      const busy = new Map<string, number[]>(Object.keys(contenders).map((n) => [n, []]));
      for (let round = 0; round < ROUNDS; round++) {
        const names = Object.keys(contenders);
        for (const name of round % 2 ? names.reverse() : names) {
          const cpu = procCpuMs(mocks.pid!);
          const wall = await contenders[name]!(batched);
          walls.get(name)!.push(wall);
          busy.get(name)!.push((procCpuMs(mocks.pid!) - cpu) / wall);
        }
      }
      const rate = (name: string) => PROMPTS / (median(walls.get(name)!) / 1000);
      const load = (name: string) => `${Math.round(median(busy.get(name)!) * 100)} %`;
      const [ours, theirs] = [rate('Swarm Lab'), rate('Aurora-Swarm')];
      say(
        `  ${batched ? 'batched   ' : 'individual'}  Swarm Lab ${Math.round(ours).toLocaleString('en-US')} prompts/s · Aurora-Swarm ${Math.round(theirs).toLocaleString('en-US')} prompts/s → ${(ours / theirs).toFixed(2)}× (target ≥ ${batched ? 2 : 4}×); mock-server process CPU ÷ wall ${load('Swarm Lab')} with ours, ${load('Aurora-Swarm')} with theirs`,
      );
    }
  } finally {
    mocks.kill();
    await rm(work, { recursive: true, force: true });
  }
}

async function firstLine(child: ChildProcess): Promise<number[]> {
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit').then(() => {
    throw new Error('Aurora-Swarm mock servers exited before listening');
  });
  const [line] = (await Promise.race([once(lines, 'line'), exited])) as [string];
  return JSON.parse(line) as number[];
}

/** Wall time of one python process from spawn to exit; it must exit 0. */
async function pythonWall(python: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  const child = spawn(python, ['-c', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: childEnv() });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`Aurora-Swarm client exited ${code}: ${stderr.trim().split('\n').at(-1)}`);
  return performance.now() - t0;
}


import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHostfile, type Endpoint } from '../../core/index.ts';
import { measureSwarm, type ProcessCost } from './bench-process.ts';
import { pathsLine, requestsByPath } from './bench-realistic.ts';
import { startSimFleet, type SimFleet } from './bench-sim-fleet.ts';
import type { Say } from './bench-sim.ts';

const ZERO = ['--ttft-ms', '0', '--tpot-ms', '0', '--request-overhead-ms', '0', '--reply', 'echo'];
const SIM_PROCESSES = 2;
/** One row over prompts (at 1,000 endpoints) and one over endpoints (at 100,000 prompts); they share 100k × 1,000. */
const CELLS: Array<[prompts: number, endpoints: number]> = [
  [10_000, 1_000],
  [100_000, 1_000],
  [1_000_000, 1_000],
  [100_000, 10],
  [100_000, 100],
];
const WHOLE: [number, number] = [100_000, 1_000];
/** The whole-process cell again on raw batches (`--template none`), for what the default path to the chat template costs. */
const RAW = true;
const TARGET_US = 5;
const TARGET_RSS_MB = 250;

interface Cell {
  prompts: number;
  endpoints: number;
  cost: ProcessCost;
  simCpuMs: number;
  /** What the servers received, by path. */
  paths: Record<string, number>;
}

/**
 * What the client costs as the swarm grows: `swarm scatter --out FILE` in a child process of its own
 * (so its CPU and peak RSS are its alone), batched, against a zero-latency simulator whose 1,000
 * ports are served by two processes; fewer endpoints are a spread subset of them.
 */
export async function costCurveBench(say: Say): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'swarm-bench-'));
  const fleet = await startSimFleet(1_000, SIM_PROCESSES, ZERO);
  try {
    const cells: Cell[] = [];
    for (const [prompts, endpoints] of CELLS) cells.push(await cell(dir, fleet, prompts, endpoints));
    const raw = await cell(dir, fleet, ...WHOLE, RAW);
    say();
    say(`cost curve, batched: \`swarm scatter --out FILE --max-tokens 16 --no-hedge\` (the default path to the chat template) as its own process (whole process: start-up = exec to its first HTTP request), zero-latency simulator, 1,000 ports over ${SIM_PROCESSES} processes`);
    say('  (no hedging: against a zero-latency server the client\'s own lag in sending 1,000 first requests looks like slow endpoints and doubles their work)');
    say(`  ${'prompts × endpoints'.padEnd(21)}${'wall'.padStart(9)}${'client CPU'.padStart(12)}${'start-up'.padStart(10)}${'run'.padStart(9)}${'run µs/prompt'.padStart(15)}${'peak RSS'.padStart(10)}${'sim CPU'.padStart(9)}`);
    for (const c of cells) {
      const { cost } = c;
      say(
        `  ${`${int(c.prompts)} × ${int(c.endpoints)}`.padEnd(21)}${s(cost.wallMs).padStart(9)}${s(cost.startupCpuMs + cost.runCpuMs).padStart(12)}${s(cost.startupCpuMs).padStart(10)}${s(cost.runCpuMs).padStart(9)}${((cost.runCpuMs * 1000) / c.prompts).toFixed(2).padStart(15)}${mb(cost.maxRssKb).padStart(10)}${s(c.simCpuMs).padStart(9)}`,
      );
    }
    const at = (p: number, e: number) => cells.find((c) => c.prompts === p && c.endpoints === e)!;
    const runUs = (c: Cell) => (c.cost.runCpuMs * 1000) / c.prompts;
    const [small, mid, big] = [at(10_000, 1_000), at(100_000, 1_000), at(1_000_000, 1_000)];
    say(`  over prompts (1,000 endpoints): run CPU per prompt ${[small, mid, big].map((c) => runUs(c).toFixed(2)).join(' → ')} µs; 10× the prompts cost ${(mid.cost.runCpuMs / small.cost.runCpuMs).toFixed(1)}× and ${(big.cost.runCpuMs / mid.cost.runCpuMs).toFixed(1)}× the run CPU (linear: 10×)`);
    const byEndpoints = [at(100_000, 10), at(100_000, 100), mid];
    say(`  over endpoints (100,000 prompts): run CPU ${byEndpoints.map((c) => s(c.cost.runCpuMs)).join(' → ')}, peak RSS ${byEndpoints.map((c) => mb(c.cost.maxRssKb)).join(' → ')} at 10 → 100 → 1,000`);
    const held = ((mid.cost.maxRssKb - small.cost.maxRssKb) * 1024) / (mid.prompts - small.prompts);
    const heldBig = ((big.cost.maxRssKb - mid.cost.maxRssKb) * 1024) / (big.prompts - mid.prompts);
    const whole = at(...WHOLE);
    const totalUs = ((whole.cost.startupCpuMs + whole.cost.runCpuMs) * 1000) / whole.prompts;
    say();
    say(`whole client process, batched ${int(WHOLE[0])} prompts × ${int(WHOLE[1])} endpoints (target ≤ ${TARGET_US} µs/prompt, ≤ ${TARGET_RSS_MB} MB)`);
    say(`  start-up CPU ${s(whole.cost.startupCpuMs)} + run CPU ${s(whole.cost.runCpuMs)} = ${totalUs.toFixed(2)} µs per prompt whole process, ${runUs(whole).toFixed(2)} µs per prompt for the run`);
    say(`  peak RSS ${mb(whole.cost.maxRssKb)}; memory held per prompt (peak RSS growth ÷ prompts): ${Math.round(held)} B from 10k to 100k, ${Math.round(heldBig)} B from 100k to 1M`);
    say(`  requests, as the servers counted them: ${pathsLine(whole.paths)}`);
    say(
      `  against raw batches (--template none: ${pathsLine(raw.paths)}): wall ${s(whole.cost.wallMs)} vs ${s(raw.cost.wallMs)} = ${(whole.cost.wallMs / raw.cost.wallMs).toFixed(2)}× (target ≤ 1.2×), ` +
        `client CPU ${(cpu(whole) / cpu(raw)).toFixed(2)}×, peak RSS ${mb(whole.cost.maxRssKb)} vs ${mb(raw.cost.maxRssKb)}`,
    );
  } finally {
    await fleet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function cell(dir: string, fleet: SimFleet, prompts: number, endpoints: number, raw = false): Promise<Cell> {
  const all: Endpoint[] = fleet.endpoints;
  const hostfile = join(dir, `hosts-${endpoints}.txt`);
  const promptsFile = join(dir, `prompts-${prompts}.txt`);
  const step = all.length / endpoints;
  await writeFile(hostfile, writeHostfile(all.filter((_, i) => i % step === 0)));
  await writeFile(promptsFile, Array.from({ length: prompts }, (_, i) => `Prompt ${i}: say something about ${i}.\n`).join(''));
  const [cpuBefore, before] = [sum(fleet.cpuMs()), await fleet.servers()];
  const args = ['scatter', '--hostfile', hostfile, '--prompts', promptsFile, '--out', join(dir, 'out.jsonl'), '--quiet', '--model', 'sim-model', '--max-tokens', '16', '--no-hedge'];
  const cost = await measureSwarm(raw ? [...args, '--template', 'none'] : args);
  return { prompts, endpoints, cost, simCpuMs: sum(fleet.cpuMs()) - cpuBefore, paths: requestsByPath(before, await fleet.servers()) };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const cpu = (c: Cell) => c.cost.startupCpuMs + c.cost.runCpuMs;
const int = (n: number) => n.toLocaleString('en-US');
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

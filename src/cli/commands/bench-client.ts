import pLimit from 'p-limit';
import { Pool } from '../../core/http/undici-pool.ts';
import { median, scatterGather, SwarmPool, originOf, type Endpoint } from '../../core/index.ts';
import type { SimProcess } from './bench-sim.ts';
import { procCpuMs } from './bench-process.ts';

type Say = (line?: string) => void;
type StartSim = (endpoints: number, flags?: readonly string[]) => Promise<SimProcess>;

const REQUESTS = 20_000;
const CONCURRENCY = 64;
/** Rounds of each contender, alternating; a pair's ratio is read round by round (its two runs were back to back). */
const ROUNDS = 7;
/** The openai SDK's rounds (the first ones): at a tenth of the others' pace, seven would take minutes. */
const SDK_ROUNDS = 3;
/** Uncounted prompts each contender sends first, so compiling its code is charged to none of the rounds. */
const WARM_UP = 2_000;
const ZERO = ['--ttft-ms', '0', '--tpot-ms', '0', '--request-overhead-ms', '0', '--reply', 'echo'];

/**
 * What the client alone can drive in individual mode: chat requests against a zero-latency server
 * in another process (4 ports), Swarm Lab's pool against raw undici `Pool.request` and the `openai`
 * SDK, each under the same concurrency, rounds alternating. Same requests, same answers parsed.
 * Each warms up alike first. Ours against another is the median of the rounds' own ratios: two runs
 * of one round share the machine's load of the moment, which a ratio of medians taken apart does not.
 */
export async function clientBench(say: Say, startSim: StartSim): Promise<void> {
  const sim = await startSim(4, ZERO);
  try {
    const prompts = Array.from({ length: REQUESTS }, (_, i) => `Prompt ${i}`);
    const contenders: Record<string, (list: string[]) => Promise<void>> = {
      'swarm pool': (list) => ours(sim.endpoints, list),
      'raw undici': (list) => undici(sim.endpoints, list),
      'openai SDK': (list) => openai(sim.endpoints, list),
    };
    const names = Object.keys(contenders);
    const rounds = new Map<string, Array<{ wallMs: number; cpuMs: number; simMs: number }>>(names.map((n) => [n, []]));
    for (const name of names) await contenders[name]!(prompts.slice(0, WARM_UP));
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 ? [...names].reverse() : names) {
        if (name === 'openai SDK' && round >= SDK_ROUNDS) continue;
        const [t0, cpu, sim0] = [performance.now(), process.cpuUsage(), procCpuMs(sim.child.pid!)];
        await contenders[name]!(prompts);
        const { user, system } = process.cpuUsage(cpu);
        rounds.get(name)!.push({ wallMs: performance.now() - t0, cpuMs: (user + system) / 1000, simMs: procCpuMs(sim.child.pid!) - sim0 });
      }
    }
    const med = (name: string, f: (r: { wallMs: number; cpuMs: number; simMs: number }) => number) => median(rounds.get(name)!.map(f));
    const rate = (name: string) => REQUESTS / (med(name, (r) => r.wallMs) / 1000);
    const cpuPerRequest = (name: string) => (med(name, (r) => r.cpuMs) * 1000) / REQUESTS;
    /** Ours against `other`, round by round: by req/s (their walls) and by client CPU; the median, and the lowest and highest. */
    const against = (other: string) => {
      const [mine, theirs] = [rounds.get('swarm pool')!, rounds.get(other)!];
      const byCpu = theirs.map((r, i) => r.cpuMs / mine[i]!.cpuMs);
      const byRate = theirs.map((r, i) => r.wallMs / mine[i]!.wallMs);
      const x = (v: number) => `${v.toFixed(2)}×`;
      return `${x(median(byRate))} req/s, ${x(median(byCpu))} by client CPU (rounds ${x(Math.min(...byCpu))}–${x(Math.max(...byCpu))})`;
    };
    say();
    say(`individual mode, client only: ${REQUESTS.toLocaleString('en-US')} chat requests, concurrency ${CONCURRENCY}, zero-latency simulator (4 ports) in another process; ${ROUNDS} alternating rounds (the openai SDK ${SDK_ROUNDS}) after ${WARM_UP.toLocaleString('en-US')} warm-up requests each; medians`);
    say(`  (client CPU per request is what the client itself costs; the server's CPU ÷ wall says whether it, not the client, set the pace)`);
    for (const name of names) {
      say(`  ${name.padEnd(11)} ${Math.round(rate(name)).toLocaleString('en-US').padStart(7)} req/s · client CPU ${cpuPerRequest(name).toFixed(1).padStart(6)} µs/request · server CPU ÷ wall ${(med(name, (r) => r.simMs / r.wallMs) * 100).toFixed(0)} %`);
    }
    say(`  swarm pool / raw undici = ${against('raw undici')} · swarm pool / openai SDK = ${against('openai SDK')}`);
    say(`  (each ratio is the median of the rounds' own: a round's runs are back to back, under the same load)`);
  } finally {
    await sim.stop();
  }
}

async function ours(endpoints: Endpoint[], prompts: string[]): Promise<void> {
  const pool = new SwarmPool(endpoints, { concurrency: CONCURRENCY });
  try {
    const report = await scatterGather(pool, prompts, { batch: false, maxTokens: 16, keepResults: false }).done;
    if (report.summary.ok !== prompts.length) throw new Error(`swarm pool lost prompts: ${report.summary.failed} failed`);
  } finally {
    await pool.close();
  }
}

async function undici(endpoints: Endpoint[], prompts: string[]): Promise<void> {
  const pools = endpoints.map((e) => new Pool(originOf(e), { connections: 256 }));
  const limit = pLimit(CONCURRENCY);
  try {
    await Promise.all(
      prompts.map((prompt, i) =>
        limit(async () => {
          const res = await pools[i % pools.length]!.request({
            method: 'POST',
            path: '/v1/chat/completions',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'sim-model', max_tokens: 16, messages: [{ role: 'user', content: prompt }] }),
          });
          const body = (await res.body.json()) as { choices: Array<{ message: { content: string } }> };
          if (!body.choices[0]?.message.content) throw new Error('raw undici: no answer');
        }),
      ),
    );
  } finally {
    await Promise.all(pools.map((p) => p.destroy()));
  }
}

async function openai(endpoints: Endpoint[], prompts: string[]): Promise<void> {
  // Loaded here, not at the top: every `swarm` command would pay for the SDK at start-up.
  const { default: OpenAI } = await import('openai');
  const clients = endpoints.map((e) => new OpenAI({ baseURL: `${originOf(e)}/v1`, apiKey: 'none', maxRetries: 0 }));
  const limit = pLimit(CONCURRENCY);
  await Promise.all(
    prompts.map((prompt, i) =>
      limit(async () => {
        const r = await clients[i % clients.length]!.chat.completions.create({ model: 'sim-model', max_tokens: 16, messages: [{ role: 'user', content: prompt }] });
        if (!r.choices[0]?.message.content) throw new Error('openai SDK: no answer');
      }),
    ),
  );
}


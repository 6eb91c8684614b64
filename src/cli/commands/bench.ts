import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Command } from 'commander';
import { checkHealth, childEnv, parseHostfile, scatterGather, SwarmPool, Tunnel, type Endpoint } from '../../core/index.ts';
import type { SimStats } from '../../sim/server.ts';
import { clientBench } from './bench-client.ts';
import { resilienceBench } from './bench-resilience.ts';
import { routingBench } from './bench-routing.ts';
import type { SimIpcMessage } from './sim.ts';

const SIM = { overheadMs: 2, ttftMs: 20, tpotMs: 1 };
const MAX_TOKENS = 32;
const ROUNDS = 3;

interface Arm {
  wallMs: number[];
  requests: number;
  idealMs: number[];
  /** The client's own CPU time (user + system), ms per run. */
  cpuMs: number[];
}

/** `npm run bench`: ratios measured in one run, the simulator in its own process. */
export function benchCommand(): Command {
  return new Command('bench')
    .description('benchmark batched vs individual on the simulator: HTTP requests, wall time, wall / ideal makespan, peak RSS')
    .option('--quick', 'only the 20 × 4 scenario')
    .option('--via <[user@]host[:port]>', 'also time SSH tunnels through this login host: 20 forwards, and 200 endpoints over SOCKS')
    .option('--ssh-config <file>', 'ssh config file for --via')
    .action(async (flags: { quick?: boolean; via?: string; sshConfig?: string }) => {
      const say = (line = '') => process.stdout.write(`${line}\n`);
      say(`swarm bench: simulator in a child process (${SIM.overheadMs} ms serialized per HTTP request, ttft ${SIM.ttftMs} ms, tpot ${SIM.tpotMs} ms), max_tokens ${MAX_TOKENS}`);
      say(`each scenario: a warm-up, then ${ROUNDS} rounds alternating batched/individual; medians shown`);
      const scenarios: Array<[number, number]> = flags.quick ? [[20, 4]] : [[20, 4], [10_000, 100]];
      let simRssKb = 0;
      for (const [prompts, endpoints] of scenarios) {
        const { batched, individual, rssKb } = await scenario(prompts, endpoints);
        simRssKb = Math.max(simRssKb, rssKb);
        say();
        say(`${prompts.toLocaleString('en-US')} prompts × ${endpoints} endpoints`);
        say(`  HTTP requests   batched ${batched.requests.toLocaleString('en-US')} · individual ${individual.requests.toLocaleString('en-US')} → ${(individual.requests / batched.requests).toFixed(1)}× fewer batched`);
        say(`  wall time       batched ${s(median(batched.wallMs))} · individual ${s(median(individual.wallMs))} → individual / batched = ${(median(individual.wallMs) / median(batched.wallMs)).toFixed(2)}×`);
        say(`  batched wall / ideal makespan (simulator's modeled work) = ${(median(batched.wallMs) / median(batched.idealMs)).toFixed(2)}×`);
        say(`  client CPU      batched ${s(median(batched.cpuMs))} · individual ${s(median(individual.cpuMs))} → individual / batched = ${(median(individual.cpuMs) / median(batched.cpuMs)).toFixed(2)}×`);
        say(`  rounds (batched / individual): ${batched.wallMs.map(s).join(' ')} / ${individual.wallMs.map(s).join(' ')}`);
      }
      if (!flags.quick) await clientBench(say, startSimProcess);
      if (!flags.quick) await resilienceBench(say, startSimProcess);
      if (!flags.quick) await routingBench(say, startSimProcess);
      if (flags.via) await tunnelBench(flags.via, flags.sshConfig, say);
      say();
      say(`peak RSS: swarm client ${mb(process.resourceUsage().maxRSS)} · simulator process ${mb(simRssKb)}`);
    });
}

async function scenario(promptCount: number, endpointCount: number): Promise<{ batched: Arm; individual: Arm; rssKb: number }> {
  const sim = await startSimProcess(endpointCount);
  const pool = new SwarmPool(sim.endpoints);
  try {
    const prompts = Array.from({ length: promptCount }, (_, i) => `Prompt ${i}: say something about ${i}.`);
    await scatterGather(pool, prompts.slice(0, endpointCount), { maxTokens: 1 }).done;
    await scatterGather(pool, prompts.slice(0, endpointCount), { maxTokens: 1, batch: false }).done;
    const arm = (): Arm => ({ wallMs: [], requests: 0, idealMs: [], cpuMs: [] });
    const arms = { batched: arm(), individual: arm() };
    for (let round = 0; round < ROUNDS; round++) {
      for (const batch of round % 2 ? [false, true] : [true, false]) {
        const before = await sim.stats();
        const cpu = process.cpuUsage();
        const report = await scatterGather(pool, prompts, { batch, maxTokens: MAX_TOKENS }).done;
        if (report.summary.ok !== promptCount) throw new Error(`bench run lost prompts: ${report.summary.failed} failed (${report.error ?? report.results.find((r) => !r.ok)?.error})`);
        const { user, system } = process.cpuUsage(cpu);
        const after = await sim.stats();
        const into = batch ? arms.batched : arms.individual;
        into.wallMs.push(report.summary.wallMs);
        into.cpuMs.push((user + system) / 1000);
        into.requests = report.summary.httpRequests;
        into.idealMs.push(idealMakespan(before.servers, after.servers));
      }
    }
    return { ...arms, rssKb: (await sim.stats()).maxRssKb };
  } finally {
    await pool.close();
    await sim.stop();
  }
}

/** Time to bring a tunnel up (login, forwards, first health round over HTTP) and down. */
async function tunnelBench(via: string, sshConfigFile: string | undefined, say: (line?: string) => void): Promise<void> {
  say();
  say(`SSH tunnels through ${via} (each: login, routes, one health round over them, teardown)`);
  for (const [count, mode] of [[20, 'forward'], [200, 'socks']] as const) {
    const sim = await startSimProcess(count);
    try {
      const t0 = performance.now();
      const tunnel = await Tunnel.open(sim.endpoints, { via, mode, ...(sshConfigFile ? { sshConfigFile } : {}) });
      const up = performance.now();
      const pool = new SwarmPool(sim.endpoints, { routes: tunnel.routes });
      const healthy = (await checkHealth(pool)).filter((r) => r.status === 'healthy').length;
      const ready = performance.now();
      await pool.close();
      await tunnel.close();
      const down = performance.now();
      say(`  ${count} endpoints, ${mode}: up in ${s(up - t0)} · all ${healthy === count ? '' : `(only ${healthy}) `}healthy over it after ${s(ready - t0)} · torn down in ${s(down - ready)}`);
    } finally {
      await sim.stop();
    }
  }
}

/** The longest any one server was modeled busy: its serialized front-end time plus its sequences' running time. */
function idealMakespan(before: SimStats[], after: SimStats[]): number {
  return Math.max(
    ...after.map((a, i) => {
      const requests = a.generationRequests - before[i]!.generationRequests;
      return a.busyMs - before[i]!.busyMs + requests * SIM.overheadMs;
    }),
  );
}

export interface SimProcess {
  child: ChildProcess;
  endpoints: Endpoint[];
  stats(): Promise<Extract<SimIpcMessage, { type: 'stats' }>>;
  stop(): Promise<void>;
}

/** `swarm sim` in a child process (lorem replies, the bench's latency unless `flags` say otherwise). */
export async function startSimProcess(endpoints: number, flags: readonly string[] = []): Promise<SimProcess> {
  const args = ['sim', '--endpoints', String(endpoints), '--reply', 'lorem', '--request-overhead-ms', String(SIM.overheadMs), '--ttft-ms', String(SIM.ttftMs), '--tpot-ms', String(SIM.tpotMs), ...flags];
  // The simulator needs no key of ours: it gets only what any child of ours may see.
  const child: ChildProcess = fork(process.argv[1]!, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: childEnv() });
  const [ready] = (await once(child, 'message')) as [SimIpcMessage];
  if (ready.type !== 'ready') throw new Error('simulator did not report ready');
  const endpointList = parseHostfile(ready.endpoints.join('\n')).endpoints;
  return {
    child,
    endpoints: endpointList,
    stats: async () => {
      child.send({ type: 'stats' });
      const [m] = (await once(child, 'message')) as [SimIpcMessage];
      if (m.type !== 'stats') throw new Error('unexpected message from simulator');
      return m;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (ms: number) => `${(ms / 1000).toFixed(3)} s`;
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

import { Command } from 'commander';
import { cpus, loadavg } from 'node:os';
import { checkHealth, gainVerdict, matchedConcurrency, median, SwarmPool, Tunnel, type MatchedArm } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { clientBench } from './bench-client.ts';
import { costCurveBench } from './bench-cost-curve.ts';
import { originalBench } from './bench-original.ts';
import { cores, IDEAL_RULE, pathsLine, promptList, realisticBench, SIM_PROCESSES, templateCostBench, timedRun, withFleet, type Timed } from './bench-realistic.ts';
import { resilienceBench } from './bench-resilience.ts';
import { prefixBench } from './bench-prefix.ts';
import { llamaPlanBench, planBench } from './bench-plan.ts';
import { sweepBench } from './bench-sweep.ts';
import { routingBench } from './bench-routing.ts';
import { REAL, startSimProcess } from './bench-sim.ts';

const SECTIONS = ['modes', 'realistic', 'client', 'cost', 'original', 'resilience', 'routing', 'prefix', 'sweep', 'plan', 'llama'] as const;
/**
 * Alternating rounds per mode. Both arms get the work in flight that fills the servers: the individual
 * arm min(prompts, endpoints × max-num-seqs) requests. This machine's processes hold 20,000 file
 * descriptors, so at 1,000 endpoints the servers run 8 sequences each (8,000 in flight, a socket
 * each) rather than 256 (100,000 sockets): matched at a smaller size, not unmatched at the larger.
 */
const SCENARIOS: Array<{ prompts: number; endpoints: number; rounds: number; maxNumSeqs: number }> = [
  { prompts: 20, endpoints: 4, rounds: 3, maxNumSeqs: REAL.maxNumSeqs },
  { prompts: 10_000, endpoints: 100, rounds: 1, maxNumSeqs: REAL.maxNumSeqs },
  { prompts: 100_000, endpoints: 1_000, rounds: 1, maxNumSeqs: 8 },
];

interface Arm {
  runs: Timed[];
}

/** `npm run bench`: ratios measured in one run, the simulator in processes of its own. */
export function benchCommand(): Command {
  return new Command('bench')
    .description('benchmark the client: batched vs individual, wall / ideal makespan, cost curve, whole-process CPU and RSS, against raw undici, the openai SDK and Aurora-Swarm')
    .option('--quick', 'only the 20 × 4 scenario')
    .option('--only <sections>', `comma-separated sections to run: ${SECTIONS.join(', ')}`)
    .option('--via <[user@]host[:port]>', 'also time SSH tunnels through this login host: 20 forwards, and 200 endpoints over SOCKS')
    .option('--ssh-config <file>', 'ssh config file for --via')
    .action(async (flags: { quick?: boolean; only?: string; via?: string; sshConfig?: string }) => {
      const say = (line = '') => process.stdout.write(`${line}\n`);
      const only = flags.quick ? ['modes'] : (flags.only?.split(',') ?? SECTIONS);
      const unknown = only.filter((x) => !(SECTIONS as readonly string[]).includes(x));
      if (unknown.length) throw new CliError(`--only: no section ${unknown.join(', ')} (sections: ${SECTIONS.join(', ')})`);
      const on = (section: (typeof SECTIONS)[number]) => only.includes(section);
      say(`swarm bench on ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
      say(`realistic settings: ttft ${REAL.ttftMs} ms, tpot ${REAL.tpotMs} ms, ${REAL.overheadMs} ms serialized per HTTP request, max_tokens ${REAL.maxTokens} with lorem answers ending at a sampled EOS between ${REAL.maxTokens / 2} and ${REAL.maxTokens} tokens, max-num-seqs ${REAL.maxNumSeqs}, concurrency ${REAL.concurrency}; simulator ports spread over ${SIM_PROCESSES} processes`);
      say(IDEAL_RULE);
      if (on('modes')) for (const sc of flags.quick ? SCENARIOS.slice(0, 1) : SCENARIOS) printScenario(sc, await scenario(sc), say);
      if (on('realistic')) {
        await realisticBench(say);
        await templateCostBench(say);
      }
      if (on('client')) await clientBench(say, startSimProcess);
      if (on('cost')) await costCurveBench(say);
      if (on('original')) await originalBench(say);
      if (on('resilience')) await resilienceBench(say, startSimProcess);
      if (on('routing')) await routingBench(say, startSimProcess);
      if (on('prefix')) await prefixBench(say, startSimProcess);
      if (on('sweep')) await sweepBench(say, startSimProcess);
      if (on('plan')) await planBench(say, startSimProcess);
      if (on('llama')) await llamaPlanBench(say, startSimProcess);
      if (flags.via) await tunnelBench(flags.via, flags.sshConfig, say);
    });
}

type Scenario = (typeof SCENARIOS)[number];

function printScenario({ prompts, endpoints, maxNumSeqs }: Scenario, { batched, individual }: { batched: Arm; individual: Arm }, say: (line?: string) => void): void {
  const med = (arm: Arm, f: (t: Timed) => number) => median(arm.runs.map(f));
  const [b, i] = [batched.runs[0]!, individual.runs[0]!];
  const n = (x: number) => x.toLocaleString('en-US');
  say();
  say(`${n(prompts)} prompts × ${n(endpoints)} endpoints, realistic settings with max-num-seqs ${maxNumSeqs} (${n(endpoints * maxNumSeqs)} server slots), client in this process (${batched.runs.length} round(s) each, alternating; medians)`);
  const flight = (t: Timed) => `cap ${n(t.inFlight.concurrency)} requests, peak ${n(t.inFlight.peakPrompts)} prompts in ${n(t.inFlight.peakRequests)} requests`;
  say(`  in flight       batched ${flight(b)} · individual ${flight(i)}`);
  const unseen = (t: Timed) => (t.clientRequests > t.requests ? ` + ${n(t.clientRequests - t.requests)} that no server counted (connections that failed, or requests cancelled before they arrived)` : '');
  say(`  HTTP requests (the servers' count, first round)   batched ${n(b.requests)} (${pathsLine(b.paths)})${unseen(b)} · individual ${n(i.requests)} (${pathsLine(i.paths)})${unseen(i)} → ${(i.requests / b.requests).toFixed(1)}× fewer batched`);
  say(`  wall time       batched ${s(med(batched, (t) => t.wallMs))} · individual ${s(med(individual, (t) => t.wallMs))} → individual / batched = ${(med(individual, (t) => t.wallMs) / med(batched, (t) => t.wallMs)).toFixed(2)}×`);
  say(`  client CPU      batched ${s(med(batched, (t) => t.cpuMs))} · individual ${s(med(individual, (t) => t.cpuMs))} → individual / batched = ${(med(individual, (t) => t.cpuMs) / med(batched, (t) => t.cpuMs)).toFixed(2)}×`);
  say(`  batched wall / ideal makespan = ${med(batched, (t) => t.wallMs / t.idealMs).toFixed(3)}× (ideal ${s(med(batched, (t) => t.idealMs))}); individual ${med(individual, (t) => t.wallMs / t.idealMs).toFixed(3)}×`);
  say(`  batched: last answer's headers at ${s(med(batched, (t) => t.lastHeadersMs))}, the client done ${s(med(batched, (t) => t.wallMs - t.lastHeadersMs))} after that; cores: ${cores(b)}`);
  // The verdict's generation requests are the servers' count, as every request figure of the bench (the client's also has those that never arrived).
  const arm = (t: Timed, name: 'batched' | 'individual'): MatchedArm => ({ arm: name, round: 0, summary: { ...t.summary, generationRequests: t.generationRequests }, inFlight: t.inFlight, cpuMs: t.cpuMs, requests: [], latenciesMs: [] });
  say(`  verdict: ${gainVerdict({ serverSlots: endpoints * maxNumSeqs }, arm(b, 'batched'), arm(i, 'individual'))}`);
}

async function scenario({ prompts: promptCount, endpoints: endpointCount, rounds, maxNumSeqs }: Scenario): Promise<{ batched: Arm; individual: Arm }> {
  // A batch counts once against the cap: enough for every endpoint's list at once.
  return withFleet(endpointCount, Math.max(REAL.concurrency, endpointCount), async (fleet, pool) => {
    const prompts = promptList(promptCount);
    const individualPool = pool.withConcurrency(matchedConcurrency('match', promptCount, endpointCount * maxNumSeqs, pool.options.concurrency));
    const arms = { batched: { runs: [] as Timed[] }, individual: { runs: [] as Timed[] } };
    for (let round = 0; round < rounds; round++) {
      for (const batch of round % 2 ? [false, true] : [true, false]) (batch ? arms.batched : arms.individual).runs.push(await timedRun(fleet, batch ? pool : individualPool, prompts, batch));
    }
    return arms;
  }, maxNumSeqs);
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
      const healthy = (await checkHealth(pool)).filter((r) => r.status === 'up').length;
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

const s = (ms: number) => `${(ms / 1000).toFixed(3)} s`;

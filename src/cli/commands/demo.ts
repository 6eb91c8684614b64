import { Command, Option } from 'commander';
import { armRequests, compareBatching, gainVerdict, medianRound, scatterGather, speedup, SwarmPool, type MatchedArm, type PromptResult } from '../../core/index.ts';
import { startSimCluster, type SimCluster } from '../../sim/cluster.ts';
import { formatComparison, printable } from '../format.ts';

const ROUNDS = 3;
const MAX_TOKENS = 32;

/** Each engine's demo: the simulator plays a fast swarm; real inference on a laptop's CPU gets a smaller job. */
const DEMOS = {
  sim: { endpoints: 4, prompts: 512, what: 'simulated vLLM', start: (n: number) => startSimCluster(n, { reply: 'lorem' }) },
  llama: {
    endpoints: 2,
    prompts: 64,
    what: 'llama.cpp (real inference, tiny random-weight model)',
    start: async (n: number): Promise<SimCluster> => (await import('../../sim/llama/cluster.ts')).startLlamaCluster(n, {}, { parallel: 8, threads: 1 }),
  },
} as const;

/** The main job on the embedded default: a local swarm, the same prompts batched and one by one. */
export function demoCommand(): Command {
  return new Command('demo')
    .description(`start a local swarm in-process and scatter its prompts batched and individually, side by side (sim: ${DEMOS.sim.prompts} prompts over ${DEMOS.sim.endpoints} simulated servers; llama: ${DEMOS.llama.prompts} over ${DEMOS.llama.endpoints} llama.cpp servers)`)
    .addOption(new Option('--engine <engine>', 'sim: the simulator; llama: real llama.cpp inference on the CPU (batches rendered with the chat template, so both arms do the same task)').choices(['sim', 'llama']).default('sim'))
    .action(async ({ engine }: { engine: keyof typeof DEMOS }) => {
      const demo = DEMOS[engine];
      const cluster = await demo.start(demo.endpoints);
      const pool = new SwarmPool(cluster.endpoints);
      try {
        const prompts = Array.from({ length: demo.prompts }, (_, i) => `Question ${i}: name one property of the number ${i}.`);
        const say = (line: string) => process.stdout.write(`${line}\n`);
        say(`Swarm Lab demo: ${demo.prompts} prompts over ${demo.endpoints} ${demo.what} endpoints (${cluster.endpoints.map((e) => `${e.host}:${e.port}`).join(', ')})`);
        // A small warm-up so neither arm pays for first connections.
        await scatterGather(pool, prompts.slice(0, demo.endpoints), { maxTokens: 1 }).done;
        // The core's fair comparison: alternating rounds (ABBA), each arm's prefix cache salted apart.
        let firstBatched: readonly PromptResult[] = [];
        const comparison = await compareBatching(pool, prompts, {
          maxTokens: MAX_TOKENS,
          rounds: ROUNDS,
          onArmDone: (round, results) => {
            if (round.arm === 'batched' && firstBatched.length === 0) firstBatched = results;
          },
        }).done;
        if (comparison.error) throw new Error(comparison.error);
        const batched = medianRound(comparison.rounds, 'batched')!;
        const individual = medianRound(comparison.rounds, 'individual')!;
        say(`${ROUNDS} rounds alternating the arms; each arm's median round:`);
        say(`  batched:    ${comparison.templatePaths.batched}`);
        say(`  individual: ${comparison.templatePaths.individual}`);
        say('');
        const sent = [armRequests(comparison.rounds, 'batched'), armRequests(comparison.rounds, 'individual')] as const;
        say(formatComparison(batched.summary, individual.summary, ['batched', 'individual'], speedup(comparison.rounds)!, [...sent]));
        for (const arm of [batched, individual] as MatchedArm[]) {
          say(`  ${arm.arm.padEnd(10)} in flight: cap ${arm.inFlight.concurrency.toLocaleString('en-US')} requests, at the peak ${arm.inFlight.peakPrompts.toLocaleString('en-US')} prompts in ${arm.inFlight.peakRequests.toLocaleString('en-US')} requests; client CPU ${(arm.cpuMs / 1000).toFixed(2)} s`);
        }
        say(`  verdict: ${gainVerdict(comparison, batched as MatchedArm, individual as MatchedArm)}`);
        say('');
        say('first answers, in input order (batched):');
        for (const r of firstBatched.slice(0, 3)) say(`  #${r.index} ${r.endpoint}: ${preview(r)}`);
        say('');
        say('Next, in a scratch folder (`swarm` on your PATH after `npm link` in this repo; or `npx swarm` inside the repo):');
        say('  `swarm sim --endpoints 4 --hostfile sim.hostfile` in one terminal, then in another');
        say("  `printf 'What is 2+2?\\nSay hi.\\n' > prompts.txt` and");
        say('  `swarm scatter --hostfile sim.hostfile --prompts prompts.txt --out results.jsonl`.');
      } finally {
        await pool.close();
        await cluster.close();
      }
    });
}

/** One line of an answer: a model writes newlines and control characters (a random-weight one, anything). */
function preview(r: PromptResult): string {
  const text = (r.ok ? r.text : `[${r.status}] ${r.error}`).replaceAll('\n', ' ');
  return printable(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

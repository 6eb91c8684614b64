import { Command } from 'commander';
import { compareBatching, medianRound, scatterGather, speedup, SwarmPool, type PromptResult } from '../../core/index.ts';
import { startSimCluster } from '../../sim/cluster.ts';
import { formatComparison } from '../format.ts';

const ENDPOINTS = 4;
const PROMPTS = 512;
const MAX_TOKENS = 32;
const ROUNDS = 3;

/** The main job on the embedded default: a local simulated swarm, the same prompts batched and one by one. */
export function demoCommand(): Command {
  return new Command('demo')
    .description(`start ${ENDPOINTS} simulated vLLM servers in-process and scatter ${PROMPTS} prompts batched and individually, side by side`)
    .action(async () => {
      const cluster = await startSimCluster(ENDPOINTS, { reply: 'lorem' });
      const pool = new SwarmPool(cluster.endpoints);
      try {
        const prompts = Array.from({ length: PROMPTS }, (_, i) => `Question ${i}: name one property of the number ${i}.`);
        const say = (line: string) => process.stdout.write(`${line}\n`);
        say(`Swarm Lab demo: ${PROMPTS} prompts over ${ENDPOINTS} simulated vLLM endpoints (${cluster.endpoints.map((e) => `${e.host}:${e.port}`).join(', ')})`);
        // A small warm-up so neither arm pays for first connections.
        await scatterGather(pool, prompts.slice(0, ENDPOINTS), { maxTokens: 1 }).done;
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
        say(formatComparison(batched.summary, individual.summary, ['batched', 'individual'], speedup(comparison.rounds)!));
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

function preview(r: PromptResult): string {
  const text = r.ok ? r.text : `[${r.status}] ${r.error}`;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

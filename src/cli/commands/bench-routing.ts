import { ROUTE_STRATEGIES, type ScatterOptions } from '../../core/index.ts';
import { timed } from './bench-resilience.ts';
import type { Say, StartSim } from './bench-sim.ts';

/**
 * Each routing strategy against round-robin when 1 of 8 endpoints is 4× slower (hedging off, so the
 * routing alone shows), against the ideal of 8 healthy endpoints.
 */
export async function routingBench(say: Say, startSim: StartSim): Promise<void> {
  say();
  say('routing: 1 of 8 endpoints 4× slower, 2,000 prompts, concurrency 64, no hedging (routing alone); wall time, and its ratio to round-robin and to 8 healthy endpoints');
  for (const [label, mode] of [
    ['individual', { batch: false }],
    ['batched, streamed', { batch: true, stream: true }],
  ] as Array<[string, ScatterOptions]>) {
    const ideal = await timed(startSim, { healthy: 8, victims: 0, prompts: 2_000, mode, pool: { hedge: false, concurrency: 64 } });
    const walls = new Map<string, number>();
    for (const route of ROUTE_STRATEGIES) {
      walls.set(route, await timed(startSim, { healthy: 7, victims: 1, victimFlags: ['--slow-factor', '4'], prompts: 2_000, mode, pool: { hedge: false, concurrency: 64, route } }));
    }
    const rr = walls.get('round-robin')!;
    say(`  ${label} (8 healthy: ${s(ideal)})`);
    for (const [route, wall] of walls) say(`    ${route.padEnd(15)} ${s(wall)}  ${(wall / rr).toFixed(2)}× round-robin  ${(wall / ideal).toFixed(2)}× healthy`);
    if (!mode.batch) continue;
    // A batch's first lists are placed before any endpoint's pace is known; hedging (on by default) is what rescues them:
    // a stream whose tokens come twice as slowly as the run's is copied to the endpoints that are idle.
    for (const route of ['round-robin', 'least-requests'] as const) {
      const hedged = await timed(startSim, { healthy: 7, victims: 1, victimFlags: ['--slow-factor', '4'], prompts: 2_000, mode, pool: { concurrency: 64, route } });
      say(`    ${route} with hedging (on by default) ${s(hedged)}  ${(hedged / rr).toFixed(2)}× round-robin  ${(hedged / ideal).toFixed(2)}× healthy`);
    }
  }
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

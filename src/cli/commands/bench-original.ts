import type { Say } from './bench-resilience.ts';

export async function originalBench(say: Say): Promise<void> {
  say();
  say('against Aurora-Swarm: skipped (not yet)');
}

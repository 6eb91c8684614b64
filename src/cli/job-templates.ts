import { fileURLToPath } from 'node:url';
import type { SchedulerKind } from '../core/index.ts';

/**
 * The job templates shipped in templates/jobs/, by scheduler. The CLI runs bundled as dist/cli.js,
 * so the repository's root is one folder up from this module's URL.
 */
export function builtinTemplate(kind: SchedulerKind): string {
  return fileURLToPath(new URL(`../templates/jobs/${kind === 'pbs' ? 'aurora-pbs' : 'slurm'}.sh`, import.meta.url));
}

/** How a job on this machine runs this very `swarm` (engine sim): node and bin/swarm.js, absolute. */
export function thisSwarm(): string[] {
  return [process.execPath, fileURLToPath(new URL('../bin/swarm.js', import.meta.url))];
}

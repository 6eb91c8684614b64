import { appendFileSync } from 'node:fs';

/** A timestamped line in the runner's log (the suite's own trace: where a slow or stuck test was). */
export function step(what: string): void {
  const log = process.env.SWARM_EXT_TEST_LOG;
  if (log) appendFileSync(log, `    · ${new Date().toISOString().slice(11, 19)} ${what}\n`);
}

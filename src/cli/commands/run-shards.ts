import { Command } from 'commander';
import { runShards } from '../detached/shards.ts';

/** Not for people: what a detached run of `--shards S` runs (the starter starts it with the run's folder). */
export function runShardsCommand(): Command {
  return new Command('run-shards')
    .description("(internal) run the shards of the detached run in FOLDER and merge their files")
    .argument('<folder>')
    .action(async (folder: string) => {
      process.exitCode = await runShards(folder);
    });
}

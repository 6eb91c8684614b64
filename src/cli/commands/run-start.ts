import { Command } from 'commander';
import { text } from 'node:stream/consumers';
import { CliError } from '../exit.ts';
import { startDetached } from '../detached/start.ts';

/**
 * Not for people: what `--detach --via` runs on the login node to start a run whose folder it
 * filled. The keys come on standard input (JSON), so no argument or file ever holds one.
 */
export function runStartCommand(): Command {
  return new Command('run-start')
    .description('(internal) start the detached run of FOLDER; keys as JSON on stdin')
    .argument('<folder>')
    .action(async (folder: string) => {
      const input = process.stdin.isTTY ? '' : await text(process.stdin);
      let keys: Record<string, string> = {};
      try {
        keys = input.trim() ? (JSON.parse(input) as Record<string, string>) : {};
      } catch {
        throw new CliError('run-start: the keys on stdin are not JSON');
      }
      process.stdout.write(`${JSON.stringify(await startDetached(folder, keys))}\n`);
    });
}

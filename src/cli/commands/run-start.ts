import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { Command } from 'commander';
import { text } from 'node:stream/consumers';
import { CliError } from '../exit.ts';
import { resumeHere } from '../detached/resume.ts';
import { specPath, type Delivery, type Resumption } from '../detached/spec.ts';
import { startDetached } from '../detached/start.ts';

/**
 * Not for people: what `--detach --via` (and `swarm resume --via`) runs on the login node. Standard
 * input brings the run's spec, its input files and its keys (JSON), so no argument or file ever
 * holds a key; the folder is filled and the run started detached.
 */
export function runStartCommand(): Command {
  return new Command('run-start')
    .description('(internal) start a detached run in FOLDER from what stdin brings (JSON); --resume: start it again')
    .argument('<folder>')
    .option('--resume', 'resume the run in FOLDER (stdin: its keys and the files it brings)')
    .action(async (folder: string, flags: { resume?: boolean }) => {
      let delivery: Delivery | Resumption;
      try {
        delivery = JSON.parse(await text(process.stdin)) as Delivery | Resumption;
      } catch {
        throw new CliError('run-start: stdin is not the JSON of a run');
      }
      const dir = resolve(folder);
      const paths: string[] = [];
      for (const [name, content] of Object.entries(delivery.files)) {
        const path = resolve(dir, name);
        if (!path.startsWith(`${dir}/`)) throw new CliError(`run-start: ${name} is outside the run's folder`);
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, content);
        paths.push(path);
      }
      if (flags.resume) {
        process.stdout.write(`${JSON.stringify(await resumeHere(dirname(dir), basename(dir), delivery.keys, paths[0]))}\n`);
        return;
      }
      await mkdir(dir, { recursive: true });
      await writeFile(specPath(dir), JSON.stringify((delivery as Delivery).spec));
      process.stdout.write(`${JSON.stringify(await startDetached(dir, delivery.keys))}\n`);
    });
}

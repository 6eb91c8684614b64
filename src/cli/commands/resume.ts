import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { EXIT } from '../exit.ts';
import { printable } from '../format.ts';
import { addPlaceOptions, keysFor, openPlace, reachOf, type PlaceFlags } from '../detached/detach.ts';
import { checkId } from '../detached/here.ts';
import { addLoginOptions } from '../detached/login-options.ts';
import { specPath, type RunSpec } from '../detached/spec.ts';

interface ResumeFlags extends PlaceFlags {
  hostfile?: string;
}

export function resumeCommand(): Command {
  const cmd = new Command('resume')
    .usage('RUN [--via LOGIN] [--hostfile FILE] [options]')
    .description('start a detached run that died, was cancelled or had failures again, where it lives: it keeps every ok row and sends only the prompts without one (a sharded run: only its unfinished shards), detached; follow it with swarm attach RUN')
    .argument('<run>', 'the run id (swarm runs lists them)')
    .option('--hostfile <file>', "the endpoints to finish on (a file here; e.g. the next job's), instead of the run's own");
  addLoginOptions(cmd);
  addPlaceOptions(cmd);
  return cmd.action(async (id: string, flags: ResumeFlags) => {
    checkId(id);
    const place = await openPlace(flags);
    try {
      // Its keys, from this environment, as when it was detached (a local run's hostfile names the ones it needs).
      const reply = await place.resume(id, keysFor({ hostfile: flags.hostfile ?? localHostfile(place.folder(id), Boolean(flags.via)) }), flags.hostfile);
      const where = reachOf(flags);
      if (reply.state === 'finished') {
        if (reply.log) process.stderr.write(`${printable(reply.log)}\n`);
        if (reply.exitCode !== 0) process.stderr.write(`run ${id} ended at once (exit ${reply.exitCode}): swarm attach ${id}${where} shows it\n`);
        process.exitCode = reply.exitCode ?? EXIT.failed;
        return;
      }
      process.stdout.write(`${id}\n`);
      process.stderr.write(`resumed run ${id} on ${place.label} (pid ${reply.pid}, ${reply.folder}): swarm attach ${id}${where}\n`);
    } finally {
      await place.close();
    }
  });
}

/** The hostfile a run here reads (its spec), for the names of the keys it needs. */
function localHostfile(folder: string, remote: boolean): string | undefined {
  if (remote) return undefined;
  try {
    const spec = JSON.parse(readFileSync(specPath(folder), 'utf8')) as RunSpec;
    return spec.inputs?.find((f) => f.flag === '--hostfile')?.path ?? undefined;
  } catch {
    return undefined;
  }
}

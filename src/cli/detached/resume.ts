import { existsSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileSha256, partialPathOf, STATUS_FILE } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { runsHere } from './here.ts';
import { specPath, type RecordedInput, type RunSpec, type StartReply } from './spec.ts';
import { startDetached } from './start.ts';

/** The inputs whose lines are the run's rows: a resume with other ones would mix two runs in one file. */
const ROW_INPUTS = ['--prompts', '--items'];

/**
 * `swarm resume RUN` where the run lives: the same command started again, detached, in the same
 * folder, completing its results file (`--resume`: every ok row kept, only the prompts without one
 * sent; a sharded run, only its shards that are not whole). Refused (exit 2) while it runs, when
 * it lives on another host, for a command with no results file to complete, and when its prompts
 * changed since it started. `hostfile`: the endpoints to finish on (the next job's), instead of its own.
 */
export async function resumeHere(root: string, id: string, keys: Record<string, string>, hostfile?: string): Promise<StartReply> {
  const run = runsHere(root, id)[0]!;
  if (run.live === 'running' || run.live === 'starting') throw new CliError(`run ${id} is still running (pid ${run.pid} on ${run.host}): swarm attach ${id} follows it`);
  if (run.live === 'elsewhere') throw new CliError(`run ${id} lives on ${run.host}: resume it there`);
  const dir = run.folder;
  const spec = JSON.parse(readFileSync(specPath(dir), 'utf8')) as RunSpec;
  if (spec.argv[0] !== 'scatter') throw new CliError(`run ${id} is a ${spec.argv[0]}, which has no results file to complete: start it again`);
  if (run.live === 'finished' && run.exitCode === 0) return { id, folder: dir, pid: run.pid, state: 'finished', exitCode: 0, log: `run ${id} finished with every prompt ok: nothing to resume` };
  const cwd = resolve(dir, spec.cwd ?? '.');
  await checkInputs(id, cwd, spec.inputs ?? []);
  let argv = spec.shards ? spec.argv : continued(spec.argv, spec.results ? resolve(dir, spec.results) : undefined);
  if (hostfile) argv = replaced(argv, '--hostfile', hostfile);
  await writeFile(specPath(dir), JSON.stringify({ ...spec, argv, resumes: (spec.resumes ?? 0) + 1 } satisfies RunSpec));
  // The last status says how it ended; the starter waits for the new one to say it is sending.
  rmSync(join(dir, STATUS_FILE), { force: true });
  return startDetached(dir, keys);
}

/** Each input that makes the rows, by its sha256 as the run started: gone or changed is bad input. */
async function checkInputs(id: string, cwd: string, inputs: readonly RecordedInput[]): Promise<void> {
  for (const input of inputs.filter((f) => ROW_INPUTS.includes(f.flag))) {
    const path = resolve(cwd, input.path);
    const now = await fileSha256(path).catch(() => undefined);
    if (now === undefined) throw new CliError(`run ${id} read its ${input.flag} from ${path}, which is gone: nothing to match its rows with`);
    if (now !== input.sha256) throw new CliError(`run ${id}'s ${input.flag} file ${path} changed since the run started (sha256 ${input.sha256.slice(0, 12)}…, now ${now.slice(0, 12)}…): resuming would mix two inputs in one results file; start a new run`);
  }
}

/** The run's command completing its results file: `--out F` becomes `--resume F` once F (or its .partial) exists. */
function continued(argv: readonly string[], results: string | undefined): string[] {
  if (!results || !(existsSync(results) || existsSync(partialPathOf(results)))) return [...argv];
  const out = argv.findIndex((w) => w === '--out' || w.startsWith('--out='));
  if (out < 0) return [...argv];
  const rest = argv[out] === '--out' ? argv.slice(out + 2) : argv.slice(out + 1);
  return [...argv.slice(0, out), '--resume', results, ...rest];
}

function replaced(argv: readonly string[], flag: string, value: string): string[] {
  const at = argv.findIndex((w) => w === flag || w.startsWith(`${flag}=`));
  if (at < 0) return [...argv, flag, value];
  return [...argv.slice(0, at), flag, value, ...argv.slice(at + (argv[at] === flag ? 2 : 1))];
}

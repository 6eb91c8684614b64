import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync, realpathSync } from 'node:fs';
import { finished } from 'node:stream/promises';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { posix } from 'node:path';
import { fileSha256, runsRoot, shellWord, sshHost, type JobHost, type JobRecord, type SshLogin } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { cancelHere, runsHere, type RunView } from './here.ts';
import { resumeHere } from './resume.ts';
import { specPath, type Delivery, type RecordedInput, type Resumption, type RunSpec, type StartReply } from './spec.ts';
import { startDetached } from './start.ts';

/** A local file the run reads (prompts, hostfile, …): where it is here and the flag it came with. */
export interface InputFile {
  flag: string;
  path: string;
  /** Where it is named in the run's argv, and what comes before the path there (`file:` of --template). */
  at: number;
  prefix: string;
  /**
   * A launched job's hostfile: its record, to travel beside it (`job.json`), so a run on the login
   * node watches that job as a run here would (its walltime; its early end, asked of the scheduler there).
   */
  job?: JobRecord;
}

/**
 * Where detached runs live, and the few things done to them: start one, list them, cancel one,
 * read a file of one. Here (this machine: tests, or a client already on the login node) or on the
 * login node through the one SSH login, where the same CLI, copied there, does the same things.
 */
export interface RunsPlace {
  readonly label: string;
  /** Starts `spec` (its argv naming each input file by `inputs[i].path`), passing `keys` in its environment only. */
  start(spec: RunSpec, inputs: readonly InputFile[], keys: Record<string, string>): Promise<StartReply>;
  list(id?: string): Promise<RunView[]>;
  /** Starts run `id` again, detached, completing its results (`hostfile`: a file here, the endpoints to finish on). */
  resume(id: string, keys: Record<string, string>, hostfile?: string): Promise<StartReply>;
  cancel(id: string): Promise<RunView>;
  /** A small file of a run's (its output, log), whole; undefined when there is none. */
  read(path: string): Promise<string | undefined>;
  /** Copies a file of a run's (its results) to `to` here, as bytes, streamed. */
  copy(path: string, to: string): Promise<void>;
  /** A path given for that machine (`~/x`, relative to the home folder there, or absolute), made absolute. */
  path(path: string): string;
  /** The folder of run `id` there. */
  folder(id: string): string;
  close(): Promise<void>;
}

export function localPlace(runsDir = runsRoot()): RunsPlace {
  const root = resolve(runsDir);
  return {
    label: 'this machine',
    async start(spec, inputs, keys) {
      // Here the run reads the inputs where they are, from the folder the command was given in.
      const folder = join(root, spec.id);
      await mkdir(folder, { recursive: true });
      // An input that cannot be read is recorded without a hash: the run itself says what is wrong with it (exit 2).
      const recorded = await Promise.all(inputs.map(async (f) => ({ flag: f.flag, path: resolve(f.path), sha256: await fileSha256(f.path).catch(() => '') })));
      await writeFile(specPath(folder), JSON.stringify({ ...spec, cwd: process.cwd(), inputs: recorded.filter((f) => f.sha256) } satisfies RunSpec));
      return startDetached(folder, keys);
    },
    list: async (id) => runsHere(root, id),
    resume: (id, keys, hostfile) => resumeHere(root, id, keys, hostfile && resolve(hostfile)),
    cancel: (id) => cancelHere(root, id),
    read: (path) => readFile(resolve(root, path), 'utf8').catch(() => undefined),
    copy: (path, to) => copyFile(resolve(root, path), to),
    path: (path) => resolve(path),
    folder: (id) => resolve(root, id),
    close: async () => {},
  };
}

/**
 * The login node: runs live under `root` there (relative: to the login's home, on the shared
 * filesystem); the bundled CLI is copied once per version to `~/.swarm-lab/cli/` and run with the
 * site's `node` (`--remote-node` when it is not on the login shell's PATH).
 */
export async function remotePlace(login: SshLogin, node: string, runsDir = '.swarm-lab/runs'): Promise<RunsPlace> {
  const host = sshHost(login.commands());
  const bundle = readFileSync(bundledCli(), 'utf8');
  const cli = `.swarm-lab/cli/swarm-${createHash('sha256').update(bundle).digest('hex').slice(0, 16)}.mjs`;
  // One round trip (each costs a remote shell): the home folder, the site's node, whether this CLI is there.
  const probe = await host.run(['sh', '-c', PROBE, 'sh', node, cli]);
  const [home = '', version = '', have = ''] = probe.stdout.split('\n');
  if (probe.code !== 0 || !home.startsWith('/')) throw new CliError(`cannot look around on ${host.label}: ${probe.stderr.trim() || `exit ${probe.code}`}`, 1);
  checkNode(host.label, node, version);
  if (have !== 'have') await put(host, cli, bundle);
  const root = there(home, runsDir);
  const swarm = async (args: string[], input?: string) => {
    const r = await host.run([node, cli, ...args], { timeoutMs: 180_000, ...(input === undefined ? {} : { input }) });
    if (r.code !== 0) throw new CliError(r.stderr.trim() || `swarm ${args[0]} on ${host.label}: exit ${r.code}`, r.code === 2 ? 2 : 1);
    return r.stdout;
  };
  return {
    label: host.label,
    async start(spec, inputs, keys) {
      const folder = posix.join(root, spec.id);
      const argv = [...spec.argv];
      // Each input travels with the start (one round trip) and is named in the run's folder instead.
      const files: Record<string, string> = {};
      const recorded: RecordedInput[] = [];
      for (const [i, input] of inputs.entries()) {
        // A job's hostfile keeps its name, its record beside it, where the run looks for them (jobOfHostfile).
        const name = input.job ? `inputs/${i}-job/${basename(input.path)}` : `inputs/${i}-${input.flag.replace(/^-+/, '')}-${basename(input.path).replace(/[^\w.-]/g, '_')}`;
        const bytes = await readFile(input.path);
        files[name] = bytes.toString('utf8');
        if (input.job) files[posix.join(posix.dirname(name), 'job.json')] = JSON.stringify(input.job);
        argv[input.at] = `${input.prefix}${posix.join(folder, name)}`;
        recorded.push({ flag: input.flag, path: posix.join(folder, name), sha256: createHash('sha256').update(bytes).digest('hex') });
      }
      const delivery: Delivery = { spec: { ...spec, argv, inputs: recorded }, files, keys };
      return JSON.parse(await swarm(['run-start', folder], JSON.stringify(delivery))) as StartReply;
    },
    list: async (id) => JSON.parse(await swarm(['runs', '--json', '--runs-dir', root, ...(id ? [id] : [])])) as RunView[],
    cancel: async (id) => (JSON.parse(await swarm(['cancel', '--json', '--runs-dir', root, id])) as RunView[])[0]!,
    async resume(id, keys, hostfile) {
      // The next job's hostfile travels with the keys (one round trip), into the run's folder.
      const files = hostfile ? { [`inputs/resumed-hostfile-${basename(hostfile).replace(/[^\w.-]/g, '_')}`]: await readFile(hostfile, 'utf8') } : {};
      const delivery: Resumption = { files, keys };
      return JSON.parse(await swarm(['run-start', '--resume', posix.join(root, id)], JSON.stringify(delivery))) as StartReply;
    },
    read: (path) => host.readText(posix.resolve(root, path)),
    async copy(path, to) {
      const file = createWriteStream(to);
      const r = await login.commands().run(['cat', '--', shellWord(posix.resolve(root, path))], { stdout: file, timeoutMs: COPY_MS });
      // Ended by the pipe when the output came whole; not when ssh was cut off (then r.code says so).
      if (!file.writableEnded) file.end();
      await finished(file).catch(() => undefined);
      if (r.code !== 0) throw new CliError(`cannot copy ${path} from ${host.label}: ${r.stderr || `exit ${r.code}`}`, 1);
    },
    path: (path) => there(home, path),
    folder: (id) => posix.join(root, id),
    close: () => login.close(),
  };
}

/** How long a results file may take to come over the login (a million rows: a few hundred MB). */
const COPY_MS = 3_600_000;

/** `sh -c` on the login node with $1 = node, $2 = the CLI's path: prints the home folder, node's version (or nothing), have/missing. */
const PROBE = 'pwd; if command -v "$1" >/dev/null 2>&1; then "$1" -e "process.stdout.write(process.versions.node)" 2>/dev/null; fi; echo; if test -f "$2" && touch "$2"; then echo have; else echo missing; fi';

/** A path on the login node as the login shell would take it: relative to the home folder, `~/` too. */
function there(home: string, path: string): string {
  return posix.resolve(home, path.startsWith('~/') ? path.slice(2) : path);
}

/** The site's node, version 20 or later, or one line saying what to do (exit 2). */
function checkNode(label: string, node: string, version: string): void {
  if (!version) throw new CliError(`no \`${node}\` on ${label}: detached runs need Node.js 20 or later there (load it in the login shell's profile, e.g. \`module load nodejs\`, or give --remote-node /path/to/node)`);
  const major = Number(/^(\d+)\./.exec(version)?.[1]);
  if (!(major >= 20)) throw new CliError(`\`${node}\` on ${label} is Node.js ${version}; detached runs need 20 or later (give --remote-node /path/to/node)`);
}

/**
 * Puts the CLI on the login node in one round trip: written beside, then renamed, so a copy cut
 * short is never run. Other versions unused for a week are removed: a client of another version
 * (a second laptop, an older editor) may be between its probe, which touches its copy, and its run.
 */
async function put(host: JobHost, path: string, text: string): Promise<void> {
  const script = 'mkdir -p "$(dirname "$1")" && cat > "$1.tmp" && mv -f "$1.tmp" "$1" && find "$(dirname "$1")" -maxdepth 1 -name "swarm-*.mjs" ! -path "$1" -mtime +7 -exec rm -f {} +';
  const r = await host.run(['sh', '-c', script, 'sh', path], { input: text });
  if (r.code !== 0) throw new CliError(`cannot copy the CLI to ${path} on ${host.label}: ${r.stderr.trim() || `exit ${r.code}`}`, 1);
}

/** The one file the CLI is bundled into (dist/cli.js; its npm packages are inlined), found from the running script. */
function bundledCli(): string {
  const script = realpathSync(process.argv[1]!);
  for (const candidate of [join(dirname(script), '..', 'dist', 'cli.js'), script]) {
    if (existsSync(candidate) && /\.m?js$/.test(candidate)) return candidate;
  }
  throw new CliError('detached runs on a login node copy the bundled CLI (dist/cli.js) there: run `npm run build` first', 1);
}

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { posix } from 'node:path';
import { runsRoot, sshHost, type JobHost, type SshLogin } from '../../core/index.ts';
import { CliError } from '../exit.ts';
import { cancelHere, runsHere, type RunView } from './here.ts';
import { specPath, type RunSpec, type StartReply } from './spec.ts';
import { startDetached } from './start.ts';

/** A local file the run reads (prompts, hostfile, …): where it is here and the flag it came with. */
export interface InputFile {
  flag: string;
  path: string;
  /** Where it is named in the run's argv, and what comes before the path there (`file:` of --template). */
  at: number;
  prefix: string;
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
  cancel(id: string): Promise<RunView>;
  /** A file of a run's (its results, output, log), whole; undefined when there is none. */
  read(path: string): Promise<string | undefined>;
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
    async start(spec, _inputs, keys) {
      // Here the run reads the inputs where they are, from the folder the command was given in.
      const folder = join(root, spec.id);
      await mkdir(folder, { recursive: true });
      await writeFile(specPath(folder), JSON.stringify({ ...spec, cwd: process.cwd() }));
      return startDetached(folder, keys);
    },
    list: async (id) => runsHere(root, id),
    cancel: (id) => cancelHere(root, id),
    read: (path) => readFile(resolve(root, path), 'utf8').catch(() => undefined),
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
  await checkNode(host, node);
  const cli = await installCli(host);
  const home = await host.home();
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
      // Each input is copied into the run's folder and named there instead.
      for (const [i, input] of inputs.entries()) {
        const name = posix.join(folder, 'inputs', `${i}-${input.flag.replace(/^-+/, '')}-${basename(input.path).replace(/[^\w.-]/g, '_')}`);
        await host.writeText(name, await readFile(input.path, 'utf8'));
        argv[input.at] = `${input.prefix}${name}`;
      }
      await host.writeText(posix.join(folder, 'spec.json'), JSON.stringify({ ...spec, argv }));
      return JSON.parse(await swarm(['run-start', folder], JSON.stringify(keys))) as StartReply;
    },
    list: async (id) => JSON.parse(await swarm(['runs', '--json', '--runs-dir', root, ...(id ? [id] : [])])) as RunView[],
    cancel: async (id) => (JSON.parse(await swarm(['cancel', '--json', '--runs-dir', root, id])) as RunView[])[0]!,
    read: (path) => host.readText(posix.resolve(root, path)),
    path: (path) => there(home, path),
    folder: (id) => posix.join(root, id),
    close: () => login.close(),
  };
}

/** A path on the login node as the login shell would take it: relative to the home folder, `~/` too. */
function there(home: string, path: string): string {
  return posix.resolve(home, path.startsWith('~/') ? path.slice(2) : path);
}

/** The site's node, version 20 or later, or one line saying what to do (exit 2). */
async function checkNode(host: JobHost, node: string): Promise<void> {
  const r = await host.run([node, '-e', 'process.stdout.write(process.versions.node)']);
  if (r.code === 127 || /not found|No such file/i.test(r.stderr)) {
    throw new CliError(`no \`${node}\` on ${host.label}: detached runs need Node.js 20 or later there (load it in the login shell's profile, e.g. \`module load nodejs\`, or give --remote-node /path/to/node)`);
  }
  const major = Number(/^(\d+)\./.exec(r.stdout)?.[1]);
  if (r.code !== 0 || !(major >= 20)) throw new CliError(`\`${node}\` on ${host.label} is ${r.stdout.trim() ? `Node.js ${r.stdout.trim()}` : `not Node.js (${r.stderr.trim() || `exit ${r.code}`})`}; detached runs need 20 or later (give --remote-node /path/to/node)`);
}

/** Copies this CLI's one bundled file to the login node unless that version is there already; returns its path there. */
async function installCli(host: JobHost): Promise<string> {
  const bundle = bundledCli();
  const text = readFileSync(bundle, 'utf8');
  const path = `.swarm-lab/cli/swarm-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.mjs`;
  if ((await host.run(['test', '-f', path])).code === 0) return path;
  // Written beside, then renamed: a copy cut short is never run.
  await host.writeText(`${path}.tmp`, text);
  const moved = await host.run(['mv', '-f', `${path}.tmp`, path]);
  if (moved.code !== 0) throw new CliError(`cannot put the CLI in place on ${host.label}: ${moved.stderr.trim()}`, 1);
  return path;
}

/** The one file the CLI is bundled into (dist/cli.js; its npm packages are inlined), found from the running script. */
function bundledCli(): string {
  const script = realpathSync(process.argv[1]!);
  for (const candidate of [join(dirname(script), '..', 'dist', 'cli.js'), script]) {
    if (existsSync(candidate) && /\.m?js$/.test(candidate)) return candidate;
  }
  throw new CliError('detached runs on a login node copy the bundled CLI (dist/cli.js) there: run `npm run build` first', 1);
}

import { posix } from 'node:path';
import type { SchedulerKind } from './job.ts';
import { formatWalltime } from './walltime.ts';

/** What runs in the job: vLLM, or the project's own simulator (no GPU: tests and demos). */
export type ServerEngine = 'vllm' | 'sim' | 'sim-llama';

/** Everything a job template is filled from: the launch form's fields. */
export interface LaunchParams {
  scheduler: SchedulerKind;
  jobName: string;
  nodes: number;
  serversPerNode: number;
  /** GPUs (Aurora: tiles) per server: vLLM's --tensor-parallel-size. */
  tensorParallel: number;
  model: string;
  portBase: number;
  walltimeSeconds: number;
  queue?: string;
  account?: string;
  vllmFlags: string[];
  engine: ServerEngine;
  /** Absolute folder on the scheduler's host for the script, its output and the hostfile. */
  jobDir: string;
  /** How the job runs `swarm` (engine sim): e.g. ['/usr/bin/node', '/opt/swarm-lab/bin/swarm.js']. */
  swarmCommand: string[];
  /** The hostfile's role= tag of every server. */
  role: string;
}

/** A template or a value that cannot make a job script; the message says which and why. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}

/** The hostfile the job writes, inside its folder. */
export function jobHostfile(params: Pick<LaunchParams, 'jobDir'>): string {
  return posix.join(params.jobDir, 'hostfile');
}

const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,62}$/;
const WORD = /^[A-Za-z0-9_.@+-]+$/;
const MODEL = /^[A-Za-z0-9_.@+:\/-]+$/;
const PATH = /^\/[A-Za-z0-9_.+\/-]*$/;

/**
 * Every value the templates can use, checked. A value is either a plain word, safe in a #SBATCH
 * or #PBS line and in a shell assignment as it is, or (the flags, the swarm command) a list written
 * as single-quoted shell words for a bash array: nothing a user types can run as shell code.
 */
export function templateValues(p: LaunchParams): Record<string, string> {
  const check = (name: string, value: string, pattern: RegExp, what: string) => {
    if (value !== '' && !pattern.test(value)) throw new TemplateError(`${name} "${value}" ${what}`);
    return value;
  };
  const count = (name: string, n: number, max: number) => {
    if (!Number.isSafeInteger(n) || n < 1 || n > max) throw new TemplateError(`${name} must be an integer from 1 to ${max}`);
    return String(n);
  };
  if (!Number.isSafeInteger(p.portBase) || p.portBase < 1024 || p.portBase + p.serversPerNode - 1 > 65_535) throw new TemplateError(`port base ${p.portBase}: the servers' ports must lie from 1024 to 65535`);
  if (!(p.walltimeSeconds >= 60)) throw new TemplateError('walltime must be at least a minute');
  if (p.engine !== 'vllm' && !p.swarmCommand.length) throw new TemplateError(`engine ${p.engine} needs the command that runs swarm on the compute nodes`);
  return {
    job_name: check('job name', p.jobName, NAME, 'must start with a letter and use only letters, digits and . _ - (at most 63)'),
    nodes: count('nodes', p.nodes, 100_000),
    servers_per_node: count('servers per node', p.serversPerNode, 1024),
    tp: count('tensor parallel size', p.tensorParallel, 1024),
    model: check('model', p.model, MODEL, 'may use only letters, digits and . _ @ + : / -') || fail('a model is needed'),
    port_base: String(p.portBase),
    walltime: formatWalltime(p.walltimeSeconds),
    queue: check('queue', p.queue ?? '', WORD, 'may use only letters, digits and . _ @ + -'),
    account: check('account', p.account ?? '', WORD, 'may use only letters, digits and . _ @ + -'),
    engine: p.engine,
    role: check('role', p.role, WORD, 'may use only letters, digits and . _ @ + -') || fail('a role is needed'),
    job_dir: check('job folder', p.jobDir, PATH, 'must be absolute and use only letters, digits and . _ + - /') || fail('a job folder is needed'),
    hostfile: jobHostfile(p),
    vllm_flags: p.vllmFlags.map(shellWord).join(' '),
    swarm: p.swarmCommand.map(shellWord).join(' '),
  };
}

function fail(message: string): never {
  throw new TemplateError(message);
}

/** A bash word meaning exactly `text`. */
function shellWord(text: string): string {
  if (text.includes('\0')) throw new TemplateError('a flag holds a NUL character');
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;

/**
 * The job script: every `{{name}}` replaced. A scheduler directive (`#SBATCH`, `#PBS`) whose
 * placeholders are all empty is left out, so an unset account or queue asks for the default
 * rather than for an empty one. An unknown placeholder is an error, naming the known ones.
 */
export function renderTemplate(template: string, values: Record<string, string>): string {
  if (!template.startsWith('#!')) throw new TemplateError('a job script must start with #! (the interpreter line both schedulers require)');
  const out: string[] = [];
  for (const line of template.split('\n')) {
    const names = [...line.matchAll(PLACEHOLDER)].map((m) => m[1]!);
    const unknown = names.find((n) => !(n in values));
    if (unknown) throw new TemplateError(`unknown placeholder {{${unknown}}}; known: ${Object.keys(values).join(', ')}`);
    if (names.length && /^#(SBATCH|PBS)\b/.test(line) && names.every((n) => values[n] === '')) continue;
    out.push(line.replace(PLACEHOLDER, (_, n: string) => values[n]!));
  }
  return out.join('\n');
}

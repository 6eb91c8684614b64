import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { localHost, Scheduler, sshHost, type JobHost, type SchedulerKind, type ServerEngine, type SshLogin } from '../core/index.ts';
import { onExit } from './interrupt.ts';
import { sshLogin, type ReachFlags } from './swarm.ts';

/** Where `swarm launch` keeps what it launched, per job: the record, and (local jobs) the job's own files. */
export const JOBS_FOLDER = join('.swarm', 'jobs');

/** A launched job, as `swarm jobs` and `swarm cancel-job` find it again (and a run's context names it). */
export interface JobRecord {
  id: string;
  scheduler: SchedulerKind;
  name: string;
  /** The login it was submitted through; absent: this machine. */
  via?: string;
  jobDir: string;
  scriptPath: string;
  hostfile: string;
  template: string;
  nodes: number;
  serversPerNode: number;
  model: string;
  engine: ServerEngine;
  walltimeSeconds: number;
  submittedAt: string;
  /** Once its servers were ready: when it started, when its walltime ends, the nodes it got. */
  startedAt?: string;
  endsAt?: string;
  nodeNames?: string[];
}

export async function saveRecord(record: JobRecord): Promise<string> {
  const folder = join(JOBS_FOLDER, record.name);
  await mkdir(folder, { recursive: true });
  const path = join(folder, 'job.json');
  await writeFile(path, `${JSON.stringify(record, null, 2)}\n`);
  return path;
}

/**
 * The launched job a local hostfile belongs to (`.swarm/jobs/<name>/hostfile.ready`, or the job's own
 * hostfile there): its record, or undefined for any other hostfile.
 */
export async function jobOfHostfile(path: string): Promise<JobRecord | undefined> {
  if (!['hostfile', 'hostfile.ready'].includes(basename(path))) return undefined;
  return readFile(join(dirname(path), 'job.json'), 'utf8').then((t) => JSON.parse(t) as JobRecord, () => undefined);
}

/** Every record under .swarm/jobs, oldest first; unreadable ones are skipped (a folder left half-written). */
export async function readRecords(): Promise<JobRecord[]> {
  const names = await readdir(JOBS_FOLDER).catch(() => [] as string[]);
  const records = await Promise.all(names.map((n) => readFile(join(JOBS_FOLDER, n, 'job.json'), 'utf8').then((t) => JSON.parse(t) as JobRecord, () => undefined)));
  return records.filter((r): r is JobRecord => r !== undefined).sort((a, b) => a.submittedAt.localeCompare(b.submittedAt));
}

/** Where the scheduler's commands run: this machine, or the login node over one SSH login (closed by `close`). */
export interface OpenedHost {
  host: JobHost;
  login: SshLogin | undefined;
  scheduler(kind: SchedulerKind): Scheduler;
  close(): Promise<void>;
}

export async function openJobHost(flags: ReachFlags): Promise<OpenedHost> {
  const login = flags.via ? await sshLogin({ ...flags, via: flags.via }) : undefined;
  // A second Ctrl-C exits at once: our ssh master must not outlive us.
  const forget = onExit(() => login?.killNow());
  const host = login ? sshHost(login.commands()) : localHost();
  return {
    host,
    login,
    scheduler: (kind) => new Scheduler(kind, host),
    close: async () => {
      forget();
      await login?.close();
    },
  };
}

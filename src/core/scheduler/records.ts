import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { walltimeEnd, type JobState, type SchedulerKind } from './job.ts';
import type { ServerEngine } from './template.ts';

/** Where launched jobs are kept, under a folder (the CLI's working folder, the editor's workspace): a record each, and local jobs' own files. */
export const JOBS_FOLDER = join('.swarm', 'jobs');

/**
 * A launched job, as `swarm jobs`, `swarm cancel-job` and the editor find it again; a run's context
 * names it. Written by whoever launched it (the CLI or the editor): both list each other's.
 */
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

/** The folder of a job's record (and, for a local job, its files) under `root`. */
export function jobFolder(root: string, name: string): string {
  return join(root, JOBS_FOLDER, name);
}

export async function saveJobRecord(root: string, record: JobRecord): Promise<string> {
  const folder = jobFolder(root, record.name);
  await mkdir(folder, { recursive: true });
  const path = join(folder, 'job.json');
  await writeFile(path, `${JSON.stringify(record, null, 2)}\n`);
  return path;
}

/** Every record under `root`'s .swarm/jobs, oldest first; unreadable ones are skipped (a folder left half-written). */
export async function readJobRecords(root: string): Promise<JobRecord[]> {
  const folder = join(root, JOBS_FOLDER);
  const names = await readdir(folder).catch(() => [] as string[]);
  const records = await Promise.all(names.map((n) => readFile(join(folder, n, 'job.json'), 'utf8').then((t) => JSON.parse(t) as JobRecord, () => undefined)));
  return records.filter((r): r is JobRecord => r !== undefined).sort((a, b) => a.submittedAt.localeCompare(b.submittedAt));
}

/**
 * The launched job a local hostfile belongs to (`.swarm/jobs/<name>/hostfile.ready`, or the job's own
 * hostfile there): its record, or undefined for any other hostfile.
 */
export async function jobOfHostfile(path: string): Promise<JobRecord | undefined> {
  if (!['hostfile', 'hostfile.ready'].includes(basename(path))) return undefined;
  return readFile(join(dirname(path), 'job.json'), 'utf8').then((t) => JSON.parse(t) as JobRecord, () => undefined);
}

/** The record once the job's servers are ready: when it started and ends (runs drain by that), the nodes it got. */
export function readyRecord(record: JobRecord, job: JobState): JobRecord {
  const end = walltimeEnd(job);
  return { ...record, nodeNames: job.nodes, ...(job.startedAt ? { startedAt: job.startedAt.toISOString() } : {}), ...(end ? { endsAt: end.toISOString() } : {}) };
}

/** `swarm-20261126-104512`: a job's name when none is given (letters first, as both schedulers want). */
export function defaultJobName(now = new Date()): string {
  return `swarm-${now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}`;
}

import { localHost, readJobRecords, saveJobRecord, Scheduler, sshHost, type JobHost, type JobRecord, type SchedulerKind, type SshLogin } from '../core/index.ts';
import { onExit } from './interrupt.ts';
import { sshLogin, type ReachFlags } from './swarm.ts';

export { JOBS_FOLDER, jobOfHostfile, type JobRecord } from '../core/index.ts';

/** Saves a job's record under this folder's .swarm/jobs. */
export const saveRecord = (record: JobRecord): Promise<string> => saveJobRecord('.', record);

/** Every job launched from this folder (by the CLI or the editor), oldest first. */
export const readRecords = (): Promise<JobRecord[]> => readJobRecords('.');

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

import { readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, join, posix } from 'node:path';
import * as vscode from 'vscode';
import {
  defaultJobName,
  describeJob,
  humanDuration,
  hostfileFromText,
  isFinished,
  jobFolder,
  localHost,
  parseDuration,
  readJobRecords,
  readyRecord,
  saveJobRecord,
  Scheduler,
  SchedulerError,
  SshLogin,
  sshHost,
  submitSwarm,
  TemplateError,
  Tunnel,
  waitForServers,
  walltimeEnd,
  writeHostfile,
  type Endpoint,
  type JobRecord,
  type JobState,
  type LaunchParams,
} from '../../core/index.ts';
import type { RunJob } from '../../panel/protocol.ts';
import { formDefaults, launchForm, type LaunchForm } from '../launch-form.ts';
import type { Services } from '../services.ts';
import { settings, tunnelOptions } from '../settings.ts';
import { sharedLogin } from '../ssh-login.ts';

/** What tests (and other extensions) pass instead of filling the form. */
export interface LaunchArgs {
  form?: Partial<LaunchForm>;
  jobName?: string;
}

/**
 * `Swarm: Launch Swarm…`: the form, then the job script written and submitted through the one SSH
 * login (`swarmLab.ssh.via`; else on this machine), the queue followed in a notification, the
 * hostfile and the servers' health waited for, and the swarm connected. The job is remembered in
 * .swarm/jobs (as `swarm launch` keeps it) and in the workspace state, so a reloaded window re-attaches.
 */
export async function launch(services: Services, args: LaunchArgs = {}): Promise<JobRecord | undefined> {
  const s = settings();
  const root = workspaceRoot();
  if (!root) return void vscode.window.showErrorMessage('Swarm: open a folder first: a launched job is kept under its .swarm/jobs.');
  if (s.sshVia && !vscode.workspace.isTrusted) return void vscode.window.showErrorMessage('Swarm: this workspace is not trusted, so Swarm Lab starts no processes (ssh included).');
  const form = args.form ? { ...formDefaults(s.launch), ...args.form } : await launchForm(formDefaults(s.launch), s.sshVia || 'this machine');
  if (!form) return undefined;
  const walltimeSeconds = parseDuration(form.walltime);
  if (walltimeSeconds === undefined) return void vscode.window.showErrorMessage(`Swarm: walltime ${form.walltime}: give HH:MM:SS, D-HH:MM:SS or minutes`);
  const templatePath = form.template ? (isAbsolute(form.template) ? form.template : join(root, form.template)) : vscode.Uri.joinPath(services.context.extensionUri, 'templates', 'jobs', form.scheduler === 'pbs' ? 'aurora-pbs.sh' : 'slurm.sh').fsPath;
  let template: string;
  try {
    template = await readFile(templatePath, 'utf8');
  } catch (err) {
    return void vscode.window.showErrorMessage(`Swarm: cannot read the job template ${templatePath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const name = args.jobName ?? defaultJobName();
  let login: SshLogin | undefined;
  let attached = false;
  try {
    // The window's login (a Connect's, if one is open): submitting and polling ride it, no new one-time password.
    if (s.sshVia) login = await sharedLogin(services, tunnelOptions(s));
    const host = login ? sshHost(login.commands()) : localHost();
    const scheduler = new Scheduler(form.scheduler, host);
    const jobDir = login ? posix.join(await host.home(), '.swarm', 'jobs', name) : jobFolder(root, name);
    const params: LaunchParams = {
      scheduler: form.scheduler,
      jobName: name,
      nodes: form.nodes,
      serversPerNode: form.serversPerNode,
      tensorParallel: form.tensorParallel,
      model: form.model || (form.engine === 'vllm' ? '' : 'sim-model'),
      portBase: form.portBase,
      walltimeSeconds,
      vllmFlags: words(form.vllmArgs),
      engine: form.engine,
      jobDir,
      swarmCommand: words(s.launch.swarmCommand),
      role: 'chat',
      ...(form.queue ? { queue: form.queue } : {}),
      ...(form.account ? { account: form.account } : {}),
    };
    const submitted = await submitSwarm(scheduler, template, params);
    const record: JobRecord = { id: submitted.id, scheduler: form.scheduler, name, ...(s.sshVia ? { via: s.sshVia } : {}), jobDir, scriptPath: submitted.scriptPath, hostfile: submitted.hostfile, template: templatePath, nodes: form.nodes, serversPerNode: form.serversPerNode, model: params.model, engine: form.engine, walltimeSeconds, submittedAt: new Date().toISOString() };
    await saveJobRecord(root, record);
    await services.jobs.remember(record);
    // The job watch holds the login from here (its polling and Cancel ride it) and lets go when the job ends.
    services.jobs.attach(record, scheduler, undefined, login);
    attached = true;
    void vscode.commands.executeCommand('swarmLab.endpoints.focus'); // the job's row heads the view
    services.log.info(`submitted job ${record.id} to ${form.scheduler} on ${host.label}: ${form.nodes} node(s) × ${form.serversPerNode} ${form.engine} server(s), walltime ${humanDuration(walltimeSeconds)}; script ${submitted.scriptPath}`);
    return await follow(services, record, scheduler);
  } catch (err) {
    if (!attached) await login?.close().catch(() => undefined);
    const refused = err instanceof TemplateError || (err instanceof SchedulerError && err.refused);
    services.log.error(`launch: ${(err as Error).message}`);
    void vscode.window.showErrorMessage(`Swarm: ${refused ? '' : 'launch failed: '}${(err as Error).message}`, 'Show Log').then((pick) => pick && services.log.show());
    return undefined;
  }
}

/**
 * From submitted to connected: the queue in a cancellable notification (state, position, start
 * estimate, nodes), the job's hostfile (core's waitForServers), the servers' health here (the
 * connection's wait), then polling for the walltime. A launch that fails or is cancelled before the
 * swarm is ready cancels its job: nothing is left queued or running.
 */
async function follow(services: Services, record: JobRecord, scheduler: Scheduler): Promise<JobRecord | undefined> {
  const s = settings();
  const root = workspaceRoot()!;
  const expected = record.nodes * record.serversPerNode;
  const need = Math.max(1, Math.ceil((s.launch.minHealthy / 100) * expected));
  let ready = false;
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Swarm: job ${record.id}`, cancellable: true }, async (progress, token) => {
    const abort = new AbortController();
    token.onCancellationRequested(() => abort.abort());
    let tunnel: Tunnel | undefined;
    try {
      progress.report({ message: `submitted to ${record.scheduler}; waiting for its state…` });
      const { job, endpoints } = await waitForServers(scheduler, { id: record.id, scriptPath: record.scriptPath, hostfile: record.hostfile }, {
        expected,
        minFraction: s.launch.minHealthy / 100,
        intervalMs: s.launch.pollInterval * 1000,
        signal: abort.signal,
        onState: (j) => {
          services.jobs.update(j);
          progress.report({ message: describeJob(j) });
          services.log.info(`job ${j.id}: ${describeJob(j)}`);
        },
        onServers: (n) => progress.report({ message: `${n}/${expected} server(s) up in the hostfile` }),
      });
      const connection = await connectJob(services, record, job, endpoints, (t) => (tunnel = t));
      progress.report({ message: 'waiting for the servers to answer here…' });
      const { healthy, denied } = await connection.waitForServers({ intervalMs: 1000, healthTimeoutMs: s.launch.healthTimeout * 1000, signal: abort.signal, onRound: (h, t) => progress.report({ message: `${h}/${t} healthy here` }) });
      if (abort.signal.aborted) throw new DOMException('cancelled', 'AbortError');
      if (denied) throw new Error(`${denied.endpoint} refused our credentials: set the servers' key with "Swarm: Set API Key"`);
      if (healthy < need) throw new Error(`only ${healthy} of ${expected} server(s) healthy here within ${s.launch.healthTimeout} s (${need} needed)`);
      ready = true;
      const done = readyRecord(record, job);
      await saveJobRecord(root, done);
      services.jobs.ready(done, job);
      services.jobs.startPolling(s.launch.pollInterval, () => settings().launch.warnBefore);
      const end = walltimeEnd(job);
      const said = `Swarm: job ${job.id} ready: ${healthy}/${expected} server(s) healthy${end ? `, walltime left ${humanDuration((end.getTime() - Date.now()) / 1000)}` : ''}.`;
      services.log.info(said);
      void vscode.window.showInformationMessage(said, 'Open Panel', 'Scatter Prompts…').then((pick) => {
        if (pick === 'Open Panel') void vscode.commands.executeCommand('swarmLab.openPanel');
        if (pick === 'Scatter Prompts…') void vscode.commands.executeCommand('swarmLab.scatter');
      });
      return done;
    } catch (err) {
      if (!ready) {
        await scheduler.cancel(record.id).then(
          () => services.log.info(`cancelled job ${record.id}: the launch did not complete (nothing left behind)`),
          (e: Error) => services.log.error(`could not cancel job ${record.id}: ${e.message}`),
        );
        await services.jobs.forget(record.name);
        services.jobs.detach();
        if (services.session.connection?.source.job?.id === record.id) await services.session.close();
        else await tunnel?.close().catch(() => undefined);
      }
      if (abort.signal.aborted) {
        void vscode.window.showInformationMessage(`Swarm: launch cancelled; job ${record.id} cancelled.`);
        return undefined;
      }
      services.log.error(`job ${record.id}: ${(err as Error).message}`);
      void vscode.window.showErrorMessage(`Swarm: job ${record.id}: ${(err as Error).message}`, 'Show Log').then((pick) => pick && services.log.show());
      return undefined;
    }
  });
}

/**
 * Connects the job's servers (written to hostfile.ready in the job's local folder), through a tunnel
 * on the window's login to the job's login node when it has one (a handle of its own: closing the
 * connection leaves the job's polling its login).
 */
async function connectJob(services: Services, record: JobRecord, job: JobState, endpoints: Endpoint[], opened: (t: Tunnel) => void) {
  const ready = join(jobFolder(workspaceRoot()!, record.name), 'hostfile.ready');
  await writeFile(ready, writeHostfile(endpoints));
  let tunnel: Tunnel | undefined;
  if (record.via) {
    const options = { ...tunnelOptions(settings()), via: record.via };
    opened((tunnel = await Tunnel.open(endpoints, options, await sharedLogin(services, options))));
  }
  const source = { label: `job ${record.id} · ${record.name}`, uri: vscode.Uri.file(ready), job: runJob(record, job) };
  const connection = await services.session.open(source, endpoints, tunnel);
  void vscode.commands.executeCommand('swarmLab.endpoints.focus');
  return connection;
}

function runJob(record: JobRecord, job: JobState): RunJob {
  return { id: record.id, scheduler: record.scheduler, name: record.name, nodes: job.nodes.length ? job.nodes : (record.nodeNames ?? []), template: record.template };
}

/**
 * `Swarm: Re-attach Launched Job` (and a reloaded window, for jobs on this machine): follows the
 * latest remembered job again — reconnects its servers if it runs and was ready, else waits for
 * them as the launch did. A job through SSH logs in once more.
 */
export async function attachJob(services: Services, name?: string): Promise<boolean> {
  const root = workspaceRoot();
  if (!root) return false;
  const remembered = services.jobs.remembered();
  const records = (await readJobRecords(root)).filter((r) => (name ? r.name === name : remembered.includes(r.name)));
  const record = records.at(-1);
  if (!record) {
    if (name !== undefined || remembered.length) void vscode.window.showInformationMessage('Swarm: no launched job to re-attach.');
    for (const n of remembered) await services.jobs.forget(n);
    return false;
  }
  const s = settings();
  let login: SshLogin | undefined;
  let attached = false;
  try {
    if (record.via) login = await sharedLogin(services, { ...tunnelOptions(s), via: record.via });
    const scheduler = new Scheduler(record.scheduler, login ? sshHost(login.commands()) : localHost());
    const state = await scheduler.status(record.id);
    if (!state || isFinished(state.phase)) {
      await services.jobs.forget(record.name);
      await login?.close();
      void vscode.window.showInformationMessage(`Swarm: job ${record.id} has ended${state ? ` (${describeJob(state)})` : ''}.`);
      return false;
    }
    services.jobs.attach(record, scheduler, state, login);
    attached = true;
    const readyFile = join(jobFolder(root, record.name), 'hostfile.ready');
    const listed = record.endsAt && state.phase === 'running' ? await readFile(readyFile, 'utf8').catch(() => undefined) : undefined;
    if (!listed) return (await follow(services, record, scheduler)) !== undefined;
    const endpoints = hostfileFromText(listed, readyFile).endpoints;
    await connectJob(services, record, state, endpoints, () => undefined);
    services.jobs.startPolling(s.launch.pollInterval, () => settings().launch.warnBefore);
    services.log.info(`re-attached job ${record.id}: ${describeJob(state)}`);
    return true;
  } catch (err) {
    if (!attached) await login?.close().catch(() => undefined);
    services.log.error(`re-attach job ${record.id}: ${(err as Error).message}`);
    void vscode.window.showErrorMessage(`Swarm: cannot re-attach job ${record.id}: ${(err as Error).message}`);
    return false;
  }
}

/**
 * After a reload: a remembered job on this machine is re-attached at once; one through SSH is
 * offered (re-attaching logs in, which may ask for a one-time password).
 */
export async function restoreJobs(services: Services): Promise<void> {
  const root = workspaceRoot();
  const remembered = services.jobs.remembered();
  if (!root || !remembered.length) return;
  const record = (await readJobRecords(root)).filter((r) => remembered.includes(r.name)).at(-1);
  if (!record?.via) {
    await attachJob(services, record?.name);
    return;
  }
  const pick = await vscode.window.showInformationMessage(`Swarm: job ${record.id} (${record.scheduler} through ${record.via}) was followed when the window closed.`, 'Re-attach');
  if (pick) await attachJob(services, record.name);
}

/** `Swarm: Cancel Job`: scancel / qdel of the job followed; its servers stop, so the swarm is disconnected. */
export async function cancelJob(services: Services, args: { confirmed?: boolean } = {}): Promise<boolean> {
  const job = services.jobs.job;
  const scheduler = services.jobs.scheduler;
  if (!job || !scheduler) {
    void vscode.window.showInformationMessage('Swarm: no launched job is followed.');
    return false;
  }
  if (!args.confirmed) {
    const ok = await vscode.window.showWarningMessage(`Cancel job ${job.record.id} (${job.record.scheduler})? Its servers stop; a run going on is cancelled, keeping what finished.`, { modal: true }, 'Cancel Job');
    if (!ok) return false;
  }
  try {
    await scheduler.cancel(job.record.id);
  } catch (err) {
    void vscode.window.showErrorMessage(`Swarm: could not cancel job ${job.record.id}: ${(err as Error).message}`);
    return false;
  }
  services.log.info(`cancelled job ${job.record.id} (${job.record.scheduler})`);
  await services.jobs.refresh(settings().launch.warnBefore);
  if (services.session.connection?.source.job?.id === job.record.id) {
    services.runs.cancel();
    await services.session.close();
  }
  void vscode.window.showInformationMessage(`Swarm: cancelled job ${job.record.id}.`);
  return true;
}

/** `Swarm: Drain Run`: the run going finishes what is in flight and sends nothing new. */
export function drainRun(services: Services): boolean {
  if (!services.runs.drain()) {
    void vscode.window.showInformationMessage('Swarm: no run is going on: nothing to drain.');
    return false;
  }
  services.log.info('draining the run: what is in flight finishes, nothing new is sent');
  void vscode.window.showInformationMessage('Swarm: draining the run: the requests in flight finish, nothing new is sent; the rest stays for a resume.');
  return true;
}

function workspaceRoot(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function words(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

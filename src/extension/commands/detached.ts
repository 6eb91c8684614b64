import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { stopRun } from '../../core/runs/status.ts';
import { DetachedRows } from '../detached-rows.ts';
import type { DetachedRun, DetachedRunsTree } from '../detached-runs.ts';
import type { RemoteRuns } from '../detached-runs-remote.ts';
import { detachedRows } from '../detached-history.ts';
import type { Services } from '../services.ts';
import { cliEnv, flagValue } from '../cli-env.ts';
import { rideConfig } from '../ride-login.ts';
import { settings } from '../settings.ts';
import { ATTACHED_RUNS, swarmFolder } from '../window-state.ts';

const followers = new Map<string, { dispose(): void }>();
/** How often a login-node run's rows are read again over the login while it goes. */
const REMOTE_FOLLOW_MS = 2_000;


/** Where the rows of run `id` are followed to: the workspace's `.swarm/detached/`, else the extension's storage. */
function targetOf(services: Services, id: string): string {
  return join(swarmFolder(services.context), 'detached', `${id}.jsonl`);
}

/** The run an action is for: the tree row it was started from, the id given (tests), or one picked. */
async function pickRun(tree: DetachedRunsTree, given: DetachedRun | string | undefined, title: string, fits: (r: DetachedRun) => boolean): Promise<DetachedRun | undefined> {
  const runs = tree.refresh();
  if (given) return runs.find((r) => r.id === (typeof given === 'string' ? given : given.id));
  const choices = runs.filter(fits);
  if (!choices.length) return void vscode.window.showInformationMessage(`Swarm: no detached run to ${title.toLowerCase()} in ${tree.root}`);
  const pick = await vscode.window.showQuickPick(
    choices.map((r) => ({ label: r.id, description: `${r.live}${r.live === 'finished' ? ` (exit ${r.exitCode})` : ''} · ${r.done}/${r.total}`, detail: `swarm ${r.command.join(' ')}`, run: r })),
    // Kept open when focus moves (a panel drawing a run's progress takes it): closed, the command would silently do nothing.
    { title: `Swarm: ${title} detached run`, ignoreFocusOut: true },
  );
  return pick?.run;
}

/** Attach: the run's rows streamed into a file here as they land (its whole results file, in input order, once it ends), opened in the editor. */
export async function attachDetachedRun(services: Services, tree: DetachedRunsTree, given?: DetachedRun | string): Promise<string | undefined> {
  const run = await pickRun(tree, given, 'Attach to', (r) => Boolean(r.results));
  if (!run) return undefined;
  if (!run.results) return void vscode.window.showWarningMessage(`Swarm: run ${run.id} writes no results file (its outcome is in ${run.folder})`);
  const target = targetOf(services, run.id);
  if (run.login) {
    const remote = tree.remote;
    if (!remote || remote.label !== run.login) return void vscode.window.showWarningMessage(`Swarm: run ${run.id} lives on ${run.login}: connect through that login again to follow it (or swarm attach ${run.id} --via ${run.login} --runs-dir ${tree.remote?.root ?? '…'} --out FILE)`);
    await followRemote(services, tree, run, remote, target);
    await vscode.window.showTextDocument(vscode.Uri.file(target), { preview: false });
    return target;
  }
  // A sharded run's rows are in its shards' own files (each in its shard's order) until its end merges them into one.
  const shards = flagValue(run.command, '--shards');
  if (shards && !flagValue(run.command, '--shard') && run.live !== 'finished') void vscode.window.showInformationMessage(`Swarm: run ${run.id} runs as ${shards} shards: ${target} fills with its rows, in input order, when its shards are merged at its end (until then each shard writes its own file in ${run.folder}).`);
  await follow(services, tree, run.id, run.folder, target);
  await vscode.window.showTextDocument(vscode.Uri.file(target), { preview: false });
  return target;
}

async function follow(services: Services, tree: DetachedRunsTree, id: string, folder: string, target: string): Promise<void> {
  followers.get(id)?.dispose();
  const rows = new DetachedRows(folder, target, (state, exitCode) => {
    followers.delete(id);
    // A run that ended short may be resumed: its rows are followed again then, and after a reload.
    if (state === 'finished' && exitCode === 0) void remember(services, attachedKey(id), false);
    services.log.info(`detached run ${id} ${state}: its rows are in ${target}`);
    tree.refresh();
  });
  followers.set(id, rows);
  await remember(services, attachedKey(id), true);
  await rows.start();
}

/** How a followed run is remembered: its id, behind its login for a run on a login node (run ids have no `/`). */
const attachedKey = (id: string, login?: string) => (login ? `${login}/${id}` : id);

async function remember(services: Services, key: string, on: boolean): Promise<void> {
  const keys = new Set(services.state.get<string[]>(ATTACHED_RUNS, []));
  if (on) keys.add(key);
  else keys.delete(key);
  await services.state.update(ATTACHED_RUNS, [...keys]);
}

const remembered = (services: Services, key: string) => services.state.get<string[]>(ATTACHED_RUNS, []).includes(key);

/**
 * After a reload: the runs this workspace followed are followed again (their files caught up). A
 * login-node run's once the window connects through its login again (a reload closes the login).
 */
export async function restoreAttached(services: Services, tree: DetachedRunsTree): Promise<void> {
  const runs = tree.refresh();
  const waiting = new Map<string, string[]>();
  for (const key of services.state.get<string[]>(ATTACHED_RUNS, [])) {
    const cut = key.lastIndexOf('/');
    if (cut > 0) {
      const login = key.slice(0, cut);
      waiting.set(login, [...(waiting.get(login) ?? []), key.slice(cut + 1)]);
      continue;
    }
    const run = runs.find((r) => r.id === key);
    if (run) await follow(services, tree, key, run.folder, targetOf(services, key));
    else await remember(services, key, false);
  }
  if (!waiting.size) return;
  const resume = async () => {
    const remote = tree.remote;
    const ids = remote && waiting.get(remote.label);
    if (!remote || !ids) return;
    waiting.delete(remote.label);
    if (!waiting.size) watch.dispose();
    const there = await remote.list().catch((err: unknown) => (services.log.warn(`following again the runs on ${remote.label}: ${(err as Error).message}`), undefined));
    for (const id of ids) {
      const run = there?.find((r) => r.id === id);
      if (run) await followRemote(services, tree, run, remote, targetOf(services, id));
      else if (there) await remember(services, attachedKey(id, remote.label), false);
    }
  };
  // The Detached Runs view learns the login at each connect, before this hears of it.
  const watch = services.session.onDidChange(() => void resume());
  services.context.subscriptions.push(watch);
  await resume();
}

/** Cancel: the run stops as Ctrl-C would stop it, keeping every finished result (the rest written as cancelled). */
export async function cancelDetachedRun(services: Services, tree: DetachedRunsTree, given?: DetachedRun | string): Promise<void> {
  const run = await pickRun(tree, given, 'Cancel', (r) => r.live === 'running' || r.live === 'starting');
  if (!run) return;
  if (run.live !== 'running' && run.live !== 'starting') return void vscode.window.showInformationMessage(`Swarm: run ${run.id} is ${run.live}, not running`);
  if (run.login) {
    // Over the connected swarm's one SSH login, on the login node the run lives on.
    if (!tree.remote) return void vscode.window.showWarningMessage(`Swarm: the SSH login to ${run.login} is closed; connect again to cancel run ${run.id}`);
    await tree.remote.cancel(run);
  } else if (run.host !== hostname()) return void vscode.window.showWarningMessage(`Swarm: run ${run.id} lives on ${run.host}: cancel it there (swarm cancel ${run.id})`);
  else stopRun(run);
  services.log.info(`cancelling detached run ${run.id} (pid ${run.pid}${run.login ? ` on ${run.login}` : ''}): every finished result is kept`);
  tree.refresh();
}

/**
 * Resume: the run started again where it lives, detached, completing its results file (`swarm
 * resume`, by the CLI bundled with the extension, run with the editor's Node and no shell).
 */
export async function resumeDetachedRun(services: Services, tree: DetachedRunsTree, given?: DetachedRun | string): Promise<boolean> {
  const run = await pickRun(tree, given, 'Resume', (r) => r.live === 'died' || (r.live === 'finished' && r.exitCode !== 0));
  if (!run) return false;
  const master = services.session.connection?.tunnel?.master;
  if (run.login && (!tree.remote || tree.remote.label !== run.login || !master)) {
    void vscode.window.showWarningMessage(`Swarm: run ${run.id} lives on ${run.login}: connect through that login again to resume it (or swarm resume ${run.id} --via ${run.login} --runs-dir ${tree.remote?.root ?? '…'})`);
    return false;
  }
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showErrorMessage('Swarm: this workspace is not trusted, so Swarm Lab starts no processes (resuming a run starts one).');
    return false;
  }
  // The keys its endpoints need from the editor's secret storage go in the child's environment only.
  // A login-node run's hostfile is there (its keys travelled with it); the window's default key still goes.
  const hostfile = run.login ? undefined : flagValue(run.command, '--hostfile');
  const env = await cliEnv(services, hostfile && resolve(await runCwd(run.folder), hostfile));
  const cli = join(services.context.extensionPath, 'dist', 'cli.js');
  // On the login node: resumed there over the window's login (the CLI rides its control socket: no second login).
  const s = settings();
  const where = run.login ? ['--via', s.sshVia, '--ssh-config', await rideConfig(await rideFolder(services), master!.controlSocket, s.sshConfigFile), '--ssh-path', s.sshPath, '--runs-dir', tree.remote!.root] : ['--runs-dir', tree.root];
  services.log.info(`resuming detached run ${run.id}${run.login ? ` on ${run.login}` : ''}: only the prompts without an ok row are sent`);
  let stderr = '';
  // The CLI returns once the run begins sending (reading its prompts and asking the models first): seconds, up to two minutes.
  const code = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Swarm: resuming run ${run.id}` }, () => {
    const child = spawn(process.execPath, [cli, 'resume', run.id, ...where], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.resume();
    return new Promise<number>((done) => {
      child.once('error', (err) => ((stderr += err.message), done(1)));
      child.once('exit', (c) => done(c ?? 1));
    });
  });
  services.log.info(`swarm resume ${run.id}: exit ${code}${stderr ? `\n${stderr.trim()}` : ''}`);
  tree.refresh();
  if (code !== 0) {
    void vscode.window.showErrorMessage(`Swarm: run ${run.id} was not resumed: ${stderr.trim().split('\n')[0] ?? `exit ${code}`}`);
    return false;
  }
  // A run whose rows were followed is followed again.
  // (A login-node run's follower reads its status again at once: the resumed run says running by now.)
  if (run.login) {
    if (remembered(services, attachedKey(run.id, run.login))) await followRemote(services, tree, run, tree.remote!, targetOf(services, run.id));
  } else if (remembered(services, attachedKey(run.id))) await follow(services, tree, run.id, run.folder, targetOf(services, run.id));
  return true;
}

/** The folder a run here was started from (its spec's `cwd`): its command's relative paths are from there. */
async function runCwd(folder: string): Promise<string> {
  const spec = await readFile(join(folder, 'spec.json'), 'utf8').then((t) => JSON.parse(t) as { cwd?: string }, () => ({ cwd: undefined }));
  return spec.cwd ?? folder;
}

/** Where the ssh config that rides the window's login is written (the extension's storage). */
async function rideFolder(services: Services): Promise<string> {
  const folder = services.context.globalStorageUri.fsPath;
  await mkdir(folder, { recursive: true });
  return folder;
}

/**
 * A login-node run's rows followed into `target` over the window's one login: every few seconds its
 * rows so far, in input order (its results file, and its .partial's while it goes), until it ends.
 * Remembered as the local ones are: followed again after a reload, once connected through that login.
 */
async function followRemote(services: Services, tree: DetachedRunsTree, first: DetachedRun, remote: RemoteRuns, target: string): Promise<void> {
  followers.get(first.id)?.dispose();
  await mkdir(dirname(target), { recursive: true });
  let timer: NodeJS.Timeout | undefined;
  let busy = false;
  const stop = () => {
    clearInterval(timer);
    if (followers.get(first.id) === follower) followers.delete(first.id);
  };
  const follower = { dispose: stop };
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const run = (await remote.list()).find((r) => r.id === first.id) ?? first;
      const rows = await detachedRows(run, remote);
      await writeFile(target, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
      if (run.live !== 'running' && run.live !== 'starting') {
        stop();
        // As a run here: one that ended short may be resumed, and is followed again then.
        if (run.live === 'finished' && run.exitCode === 0) await remember(services, attachedKey(run.id, run.login), false);
        services.log.info(`detached run ${run.id} on ${run.login} ${run.live}: its rows are in ${target}`);
        tree.refresh();
      }
    } catch (err) {
      services.log.warn(`following run ${first.id} on ${first.login}: ${(err as Error).message}`);
    } finally {
      busy = false;
    }
  };
  followers.set(first.id, follower);
  await remember(services, attachedKey(first.id, first.login), true);
  await tick();
  if (followers.get(first.id) === follower) timer = setInterval(() => void tick(), REMOTE_FOLLOW_MS);
}

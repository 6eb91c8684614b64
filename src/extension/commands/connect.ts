import * as vscode from 'vscode';
import { checkRemotePath, hostfileFromText, SshLogin, Tunnel, type Endpoint } from '../../core/index.ts';
import { findHostfiles, readHostfile, reportHostfileError } from '../hostfiles.ts';
import type { Services } from '../services.ts';
import { settings, tunnelOptions } from '../settings.ts';
import { loginInTerminal, sharedLogin } from '../ssh-login.ts';

/** `Swarm: Connect to Hostfile` — from the explorer (a URI), the palette (a quick pick), or tests (a URI). */
export async function connect(services: Services, uri?: vscode.Uri): Promise<boolean> {
  const target = uri instanceof vscode.Uri ? uri : await pickHostfile();
  if (!target) return false;
  let hostfile: { endpoints: Endpoint[]; warnings: string[] };
  try {
    hostfile = await readHostfile(target);
  } catch (err) {
    reportHostfileError(err, services.log);
    return false;
  }
  for (const w of hostfile.warnings) services.log.warn(w);
  return open(services, { label: vscode.workspace.asRelativePath(target), uri: target }, async () => hostfile.endpoints);
}

/** `Swarm: Connect to Remote Hostfile` — a hostfile the PBS job wrote on the cluster, read over the SSH login. */
export async function connectRemote(services: Services, path?: string): Promise<boolean> {
  const s = settings();
  if (!s.sshVia) {
    void vscode.window.showErrorMessage('Swarm: set `swarmLab.ssh.via` (the login host) to read a hostfile on the cluster.', 'Open Settings').then(
      (pick) => pick && vscode.commands.executeCommand('workbench.action.openSettings', 'swarmLab.ssh'),
    );
    return false;
  }
  const remote =
    typeof path === 'string'
      ? path
      : await vscode.window.showInputBox({
          title: `Hostfile on ${s.sshVia}`,
          prompt: 'Absolute path (or ~/…) of the hostfile the job wrote',
          placeHolder: '/lus/flare/projects/MYPROJ/job.hostfile',
          validateInput: (v) => {
            try {
              checkRemotePath(v);
              return undefined;
            } catch (err) {
              return (err as Error).message;
            }
          },
        });
  if (!remote) return false;
  return open(services, { label: `${s.sshVia}:${remote}` }, async (login) => {
    const text = await login!.readRemoteFile(remote);
    return hostfileFromText(text, `${s.sshVia}:${remote}`).endpoints;
  });
}

/**
 * Connects: with `swarmLab.ssh.via` set, one SSH login (typed in a terminal when it needs a
 * one-time password, or the window's login already made by a launch) carries every endpoint; without, endpoints are dialled directly (as under
 * Remote-SSH on the login node).
 */
async function open(services: Services, source: { label: string; uri?: vscode.Uri }, endpointsOf: (login?: SshLogin) => Promise<Endpoint[]>): Promise<boolean> {
  const s = settings();
  if (s.sshVia && !vscode.workspace.isTrusted) {
    void vscode.window.showErrorMessage('Swarm: this workspace is not trusted, so Swarm Lab starts no processes (ssh included). Trust the workspace to connect through SSH.', 'Manage Trust').then(
      (pick) => pick && vscode.commands.executeCommand('workbench.trust.manage'),
    );
    return false;
  }
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Swarm: connecting ${source.label}` }, async (progress) => {
    let login: SshLogin | undefined;
    let tunnel: Tunnel | undefined;
    try {
      if (s.sshVia) {
        progress.report({ message: `logging in to ${s.sshVia}…` });
        login = await sharedLogin(services, tunnelOptions(s));
      }
      const endpoints = await endpointsOf(login);
      // Services at a base URL are dialled directly; the login carries the compute nodes.
      const carried = endpoints.filter((ep) => !ep.url);
      if (login && carried.length) {
        progress.report({ message: `opening routes for ${carried.length} endpoints…` });
        tunnel = await Tunnel.open(carried, tunnelOptions(s), login);
      } else await login?.close();
      progress.report({ message: 'checking health…' });
      const connection = await services.session.open(source, endpoints, tunnel);
      void vscode.commands.executeCommand('swarmLab.endpoints.focus');
      services.log.info(`${source.label}: ${connection.healthy}/${endpoints.length} endpoints healthy`);
      void nextStep(services, source.label, connection.healthy, endpoints.length);
      return true;
    } catch (err) {
      await (tunnel ?? login)?.close().catch(() => undefined);
      if (err instanceof Error && err.name === 'HostfileError') reportHostfileError(err, services.log);
      else {
        services.log.error(`connect ${source.label}: ${(err as Error).message}`);
        void vscode.window.showErrorMessage(`Swarm: cannot connect ${source.label}: ${(err as Error).message}`, 'Show Log').then((pick) => pick && services.log.show());
      }
      return false;
    }
  });
}

/** After Connect, what to do next: run something (the panel, a scatter), or, with nothing up, wait or read why. */
async function nextStep(services: Services, label: string, healthy: number, total: number): Promise<void> {
  const said = `Swarm: connected ${label}, ${healthy} of ${total} endpoint${total === 1 ? '' : 's'} healthy.`;
  const pick = healthy
    ? await vscode.window.showInformationMessage(`${said} Next: compose a run in the panel, or scatter a prompt file.`, 'Open Panel', 'Scatter Prompts…')
    : await vscode.window.showWarningMessage(`${said} Runs will fail until servers answer.`, 'Wait for Servers', 'Show Log');
  if (pick === 'Open Panel') void vscode.commands.executeCommand('swarmLab.openPanel');
  if (pick === 'Scatter Prompts…') void vscode.commands.executeCommand('swarmLab.scatter');
  if (pick === 'Wait for Servers') void vscode.commands.executeCommand('swarmLab.waitForServers');
  if (pick === 'Show Log') services.log.show();
}

async function pickHostfile(): Promise<vscode.Uri | undefined> {
  const files = await findHostfiles();
  const items: Array<vscode.QuickPickItem & { uri?: vscode.Uri; remote?: true; browse?: true }> = files.map((uri) => ({
    label: vscode.workspace.asRelativePath(uri),
    description: uri.fsPath,
    uri,
  }));
  items.push({ label: '$(folder-opened) Browse…', browse: true }, { label: '$(remote) Hostfile on the login node…', remote: true });
  const pick = await vscode.window.showQuickPick(items, { title: 'Swarm: Connect to Hostfile', placeHolder: files.length ? 'Pick a hostfile' : 'No hostfile in the workspace' });
  if (pick?.remote) {
    void vscode.commands.executeCommand('swarmLab.connectRemote');
    return undefined;
  }
  if (pick?.browse) return (await vscode.window.showOpenDialog({ canSelectMany: false, title: 'Hostfile' }))?.[0];
  return pick?.uri;
}

export async function disconnect(services: Services): Promise<void> {
  services.runs.cancel();
  await services.session.close();
}

/** Brings the SSH login and every forward back (a new login in a terminal only if the master is gone). */
export async function reconnect(services: Services): Promise<void> {
  const connection = services.session.connection;
  if (!connection?.tunnel) {
    await connection?.refresh();
    return;
  }
  const tunnel = connection.tunnel;
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Swarm: reconnecting to ${tunnel.label}` }, async () => {
    try {
      await tunnel.reconnect({ runLogin: loginInTerminal(tunnel.label) });
      connection.swarm.forget();
      await connection.refresh();
    } catch (err) {
      services.log.error(`reconnect: ${(err as Error).message}`);
      void vscode.window.showErrorMessage(`Swarm: reconnect failed: ${(err as Error).message}`);
    }
  });
}

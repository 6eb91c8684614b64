import * as vscode from 'vscode';
import type { Services } from '../services.ts';
import { settings } from '../settings.ts';

/** Aurora-Swarm's health timeout: once one endpoint is up, how long the rest may take. */
const HEALTH_TIMEOUT_MS = 30 * 60_000;

/**
 * `Swarm: Wait for Servers`: vLLM servers take minutes to load their model, refusing connections
 * meanwhile. Health rounds until every endpoint is up (or the health timeout after the first was),
 * endpoints not answering shown as `booting` meanwhile; cancellable. Returns how many are up.
 */
export async function waitForServers(services: Services, args: { intervalSeconds?: number } = {}): Promise<number | undefined> {
  const connection = services.session.connection;
  if (!connection) {
    void vscode.window.showWarningMessage('Swarm: connect a hostfile first.');
    return undefined;
  }
  const total = connection.endpoints.length;
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Swarm: waiting for servers', cancellable: true }, async (progress, token) => {
    const cancel = new AbortController();
    token.onCancellationRequested(() => cancel.abort());
    const { healthy, denied } = await connection.waitForServers({
      intervalMs: (args.intervalSeconds ?? Math.min(settings().healthInterval, 10)) * 1000,
      healthTimeoutMs: HEALTH_TIMEOUT_MS,
      signal: cancel.signal,
      onRound: (up) => progress.report({ message: `${up}/${total} healthy` }),
    });
    services.log.info(`wait for servers: ${healthy}/${total} healthy${cancel.signal.aborted ? ' (cancelled)' : ''}`);
    // Waiting cannot help a refused key: said at once.
    if (denied) void vscode.window.showErrorMessage(`Swarm: ${denied.endpoint} refused the API key (HTTP ${denied.denied}); set it with "Swarm: Set API Key".`);
    return healthy;
  });
}

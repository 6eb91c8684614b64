import * as vscode from 'vscode';
import type { Endpoint } from '../core/endpoints/endpoint.ts';
import type { Tunnel } from '../core/tunnels/tunnel.ts';
import type { SwarmConnection, SwarmSource } from './connection.ts';
import { endpointKeys } from './endpoint-keys.ts';
import type { ApiKeyStore } from './secrets.ts';
import { poolOptions, settings } from './settings.ts';

/**
 * Makes a connection. Activation passes one that loads the pool and its HTTP stack (on-demand.ts)
 * on first connect; taking it as a parameter keeps this file below the commands that use the session.
 */
export type MakeConnection = (...args: ConstructorParameters<typeof SwarmConnection>) => Promise<SwarmConnection>;

/** The one connected swarm of this window (or none), announced to the tree, the status bar and the commands. */
export class Session implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SwarmConnection | undefined>();
  readonly onDidChange = this.changed.event;
  private current: SwarmConnection | undefined;
  private rekeying = Promise.resolve();

  constructor(
    private readonly keys: ApiKeyStore,
    private readonly log: vscode.LogOutputChannel,
    private readonly makeConnection: MakeConnection,
  ) {}

  get connection(): SwarmConnection | undefined {
    return this.current;
  }

  /** Replaces the current swarm with these endpoints (reached through `tunnel` when given) and checks their health. */
  async open(source: SwarmSource, endpoints: readonly Endpoint[], tunnel?: Tunnel, onDispose?: () => Promise<void>): Promise<SwarmConnection> {
    await this.close();
    const s = settings();
    const keys = await endpointKeys(endpoints, this.keys);
    if (keys.missing.length) this.log.warn(`no key stored for ${keys.missing.join(', ')}: those endpoints are sent none (set it with "Swarm: Set API Key"; key=env: reads the environment VS Code was started in)`);
    const connection = await this.makeConnection(source, endpoints, poolOptions(s, keys.credentials), tunnel, onDispose);
    this.current = connection;
    tunnel?.on('down', (why) => {
      this.log.error(`SSH connection lost: ${why}`);
      void vscode.commands.executeCommand('setContext', 'swarmLab.tunnelDown', true);
      void vscode.window.showWarningMessage(`Swarm: the SSH connection to ${tunnel.label} dropped; reconnecting… (running prompts wait for it)`, 'Reconnect').then((pick) => {
        if (pick) void vscode.commands.executeCommand('swarmLab.reconnect');
      });
    });
    tunnel?.on('up', () => {
      this.log.info(`SSH connection to ${tunnel.label} is back`);
      void vscode.commands.executeCommand('setContext', 'swarmLab.tunnelDown', false);
    });
    await vscode.commands.executeCommand('setContext', 'swarmLab.connected', true);
    this.changed.fire(connection);
    await connection.refresh();
    connection.startPolling(s.healthInterval);
    this.log.info(`connected ${source.label}: ${connection.healthy}/${endpoints.length} healthy${tunnel ? ` through ${tunnel.label} (${tunnel.mode})` : ' directly'}`);
    return connection;
  }

  /** The stored keys changed: the connected swarm's pool sends the new ones (one change at a time: a store event and the command that caused it make one new pool). */
  rekey(): Promise<void> {
    const next = this.rekeying.then(async () => {
      const connection = this.current;
      if (connection) await connection.setCredentials((await endpointKeys(connection.endpoints, this.keys)).credentials);
    });
    this.rekeying = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    const old = this.current;
    if (!old) return;
    this.current = undefined;
    this.changed.fire(undefined);
    await vscode.commands.executeCommand('setContext', 'swarmLab.connected', false);
    await vscode.commands.executeCommand('setContext', 'swarmLab.tunnelDown', false);
    await old.dispose();
    this.log.info(`disconnected ${old.source.label}`);
  }

  dispose(): void {
    void this.close();
    this.changed.dispose();
  }
}

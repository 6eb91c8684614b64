import type * as vscode from 'vscode';
import type { EndpointStatus } from '../../core/endpoints/endpoint-status.ts';
import type { EndpointInfo, HostMessage } from '../../panel/protocol.ts';
import type { SwarmConnection } from '../connection.ts';
import type { Session } from '../session.ts';
import { throttle, type Throttled } from '../../core/run/throttle.ts';

/** The endpoints as the panel lists them; an endpoint taken out of runs shows as `excluded`. */
export function endpointInfos(connection: SwarmConnection | undefined): EndpointInfo[] {
  return (connection?.snapshot ?? []).map((v) => ({ id: v.id, status: v.status, model: v.model, tags: { ...v.endpoint.tags } }));
}

export function endpointsMessage(session: Session): Extract<HostMessage, { type: 'endpoints' }> {
  const c = session.connection;
  return { type: 'endpoints', connected: Boolean(c), source: c?.source.label ?? null, endpoints: endpointInfos(c) };
}

/**
 * Posts `endpoints` when the session connects or disconnects and when health changes, at most
 * once per `intervalMs` (a health refresh over 1,000 endpoints fires once, but polling never stops),
 * and only when what the panel shows of them changed: every health check says the connection
 * changed, and 1,000 endpoints unchanged crossed to the webview (and were drawn again) for nothing.
 */
export class EndpointFeed implements vscode.Disposable {
  private connectionSub: vscode.Disposable | undefined;
  private readonly sessionSub: vscode.Disposable;
  private readonly paced: Throttled;
  /**
   * The last list posted as JSON without its statuses, and the statuses it (and the changes since)
   * said (a webview that says `ready` gets the endpoints of the moment with `init`).
   */
  private last = '';
  private statuses: EndpointStatus[] = [];

  constructor(
    private readonly session: Session,
    private readonly post: (message: HostMessage) => void,
    intervalMs = 500,
  ) {
    this.paced = throttle(() => {
      const message = endpointsMessage(this.session);
      const statuses = message.endpoints.map((e) => e.status);
      // What the list is besides statuses: when only statuses moved, only the changed ones go.
      const said = JSON.stringify({ ...message, endpoints: message.endpoints.map((e) => ({ ...e, status: '' })) });
      if (said === this.last) {
        const changes = message.endpoints.flatMap((e, i): Array<[string, EndpointStatus]> => (e.status === this.statuses[i] ? [] : [[e.id, e.status]]));
        this.statuses = statuses;
        if (changes.length) this.post({ type: 'endpointStatus', changes });
        return;
      }
      this.last = said;
      this.statuses = statuses;
      this.post(message);
    }, intervalMs);
    this.sessionSub = session.onDidChange((c) => this.follow(c));
    this.follow(session.connection, false);
  }

  private follow(connection: SwarmConnection | undefined, announce = true): void {
    this.connectionSub?.dispose();
    this.connectionSub = connection?.onDidChange(() => this.paced.call());
    if (announce) this.paced.call();
  }

  dispose(): void {
    this.paced.cancel();
    this.connectionSub?.dispose();
    this.sessionSub.dispose();
  }
}

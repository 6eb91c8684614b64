import * as vscode from 'vscode';
import {
  checkHealth,
  endpointId,
  readLoad,
  RequestFailure,
  SwarmPool,
  type Endpoint,
  type EndpointHealthReport,
  type EndpointLoad,
  type PoolOptions,
  type Route,
  type Tunnel,
} from '../core/index.ts';

export type EndpointStatus = 'unknown' | 'healthy' | 'booting' | 'unhealthy' | 'down' | 'tunnel-down';

/** One row of the Endpoints tree: always the real compute node, whatever route reaches it. */
export interface EndpointView {
  id: string;
  endpoint: Endpoint;
  status: EndpointStatus;
  model: string | null;
  maxModelLen: number | null;
  latencyMs: number | null;
  load: EndpointLoad | null;
  error: string | null;
  excluded: boolean;
  /** How it is reached: `ssh forward 127.0.0.1:41234`, `socks …`, or null when direct. */
  via: string | null;
}

/** Where a connected swarm came from, for titles and the status bar tooltip. */
export interface SwarmSource {
  label: string;
  uri?: vscode.Uri;
}

/**
 * A connected swarm: the endpoints, the pool over their routes, the tunnel if any, and the
 * health of each endpoint refreshed on an interval. Everything about HTTP stays in the core.
 */
export class SwarmConnection implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly views: EndpointView[];
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private pool: SwarmPool;

  constructor(
    readonly source: SwarmSource,
    readonly endpoints: readonly Endpoint[],
    private poolOptions: Partial<PoolOptions>,
    readonly tunnel: Tunnel | undefined,
    private readonly disposeExtra: () => Promise<void> = async () => {},
  ) {
    this.pool = this.makePool(poolOptions);
    this.views = endpoints.map((endpoint) => ({
      id: endpointId(endpoint),
      endpoint,
      status: 'unknown',
      model: null,
      maxModelLen: null,
      latencyMs: null,
      load: null,
      error: null,
      excluded: false,
      via: tunnel?.routes.get(endpointId(endpoint))?.via ?? null,
    }));
    tunnel?.on('down', (why) => {
      for (const s of this.pool.endpoints) this.pool.markDown(s.slot, new RequestFailure('tunnel', `tunnel down: ${why}`));
      for (const v of this.views) Object.assign(v, { status: 'tunnel-down', error: `reconnecting… (${why})`, load: null });
      this.changed.fire();
    });
    // Back up: the endpoints it cut off are looked at afresh (runs waiting on the route carry on by themselves).
    tunnel?.on('up', () => {
      this.pool.forget(this.pool.endpoints.filter((s) => s.status === 'tunnel-down').map((s) => s.slot));
      void this.refresh();
    });
  }

  /** The pool runs go through (rebuilt when the API key changes). */
  get swarm(): SwarmPool {
    return this.pool;
  }

  get snapshot(): readonly EndpointView[] {
    return this.views;
  }

  get healthy(): number {
    return this.views.filter((v) => v.status === 'healthy').length;
  }

  get excluded(): string[] {
    return this.views.filter((v) => v.excluded).map((v) => v.id);
  }

  toggleExclude(id: string): void {
    const view = this.views.find((v) => v.id === id);
    if (!view) return;
    view.excluded = !view.excluded;
    this.changed.fire();
  }

  /** A new key means new request headers: a fresh pool on the same routes. */
  async setApiKey(apiKey: string | undefined): Promise<void> {
    if (apiKey === this.poolOptions.apiKey) return;
    const old = this.pool;
    this.poolOptions = { ...this.poolOptions, apiKey };
    this.pool = this.makePool(this.poolOptions);
    await old.close();
    await this.refresh();
  }

  private makePool(options: Partial<PoolOptions>): SwarmPool {
    const routes = new Map<string, Route>(this.tunnel?.routes ?? []);
    const tunnel = this.tunnel;
    // Prompts in flight when the tunnel drops wait for its reconnect (bounded) and are sent again.
    return new SwarmPool(this.endpoints, { ...options, routes, ...(tunnel ? { awaitRoute: (_id: string, signal: AbortSignal) => tunnel.awaitUp(signal) } : {}) });
  }

  /** Health, served model and load of every endpoint (over HTTP, through the tunnel when there is one). */
  refresh(): Promise<void> {
    this.refreshing ??= this.doRefresh().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async doRefresh(): Promise<void> {
    const reports = await checkHealth(this.pool);
    const loads = await Promise.all(reports.map((r, slot) => (r.status === 'healthy' ? readLoad(this.pool, slot) : null)));
    reports.forEach((report, slot) => this.apply(this.views[slot]!, report, loads[slot] ?? null));
    this.changed.fire();
  }

  private apply(view: EndpointView, report: EndpointHealthReport, load: EndpointLoad | null): void {
    const wasUp = view.status === 'healthy' || view.status === 'unhealthy';
    // vLLM listens only once its engine is up: refused before ever answering means booting, after means down.
    const status: EndpointStatus = report.status === 'down' && !wasUp && view.status !== 'down' ? 'booting' : report.status;
    Object.assign(view, {
      status,
      model: report.models[0]?.id ?? view.model,
      maxModelLen: report.models[0]?.maxModelLen ?? view.maxModelLen,
      latencyMs: report.latencyMs,
      load,
      error: report.error,
    });
  }

  startPolling(intervalSeconds: number): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), intervalSeconds * 1000);
  }

  async dispose(): Promise<void> {
    clearInterval(this.timer);
    this.changed.dispose();
    await this.pool.close();
    await this.tunnel?.close();
    await this.disposeExtra();
  }
}

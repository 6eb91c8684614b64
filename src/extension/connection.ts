import * as vscode from 'vscode';
import type { Endpoint } from '../core/endpoints/endpoint.ts';
import type { RunJob } from '../panel/protocol.ts';
import { recordHealth } from '../core/endpoints/endpoint-health.ts';
import { viewStatus, type EndpointStatus } from '../core/endpoints/endpoint-status.ts';
import { checkHealth, type EndpointHealthReport } from '../core/endpoints/health.ts';
import type { Route } from '../core/http/base-url.ts';
import { readLoad, type EndpointLoad } from '../core/endpoints/load.ts';
import type { PoolOptions } from '../core/pool/options.ts';
import { SwarmPool } from '../core/pool/swarm-pool.ts';
import type { Tunnel } from '../core/tunnels/tunnel.ts';
import { waitForHealthy } from '../core/endpoints/wait.ts';
import { sameKeys } from './endpoint-keys.ts';
import { throttle } from '../core/run/throttle.ts';

/** One row of the Endpoints tree: always the real compute node, whatever route reaches it. */
export interface EndpointView {
  id: string;
  endpoint: Endpoint;
  /** The pool's health of it, as every view shows it; `excluded` once the user took it out of runs. */
  status: EndpointStatus;
  model: string | null;
  maxModelLen: number | null;
  latencyMs: number | null;
  load: EndpointLoad | null;
  /** Why it is not up (the pool's reason: ECONNREFUSED, the server's 500 message, …). */
  error: string | null;
  /** How it is reached: `ssh forward 127.0.0.1:41234`, `socks …`, or null when direct. */
  via: string | null;
  /** Run requests it answered and failed (after retries): its failure rate. */
  answered: number;
  failures: number;
  /** Requests whose prompts a hedge answered first (see the pool's EndpointState). */
  outrun: number;
}

/** What the last health check saw of an endpoint besides its health (kept when a later one could not ask). */
interface Probe {
  model: string | null;
  maxModelLen: number | null;
  latencyMs: number | null;
  load: EndpointLoad | null;
}

/** Where a connected swarm came from, for titles and the status bar tooltip. */
export interface SwarmSource {
  label: string;
  uri?: vscode.Uri;
  /** The launched job whose servers these are (its id, nodes, scheduler, template go with every run's context). */
  job?: RunJob;
}

/**
 * A connected swarm: the endpoints, the pool over their routes, the tunnel if any. Endpoint health
 * has one home, the pool's endpoint states: runs write there as they go, and so do the health checks
 * made here on an interval. The views read it; `onDidChange` tells them when it moved.
 */
export class SwarmConnection implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  /** A thousand endpoints failing within a second make a handful of redraws, not a thousand. */
  private readonly paced = throttle(() => this.changed.fire(), 100);
  private readonly probes: Probe[];
  private readonly excludedIds = new Set<string>();
  private readonly closing = new AbortController();
  private waiting = false;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private pool: SwarmPool;
  private unsubscribe: () => void;

  constructor(
    readonly source: SwarmSource,
    readonly endpoints: readonly Endpoint[],
    private poolOptions: Partial<PoolOptions>,
    readonly tunnel: Tunnel | undefined,
    private readonly disposeExtra: () => Promise<void> = async () => {},
  ) {
    this.pool = this.makePool(poolOptions);
    this.unsubscribe = this.pool.onStatus(() => this.paced.call());
    this.probes = endpoints.map(() => ({ model: null, maxModelLen: null, latencyMs: null, load: null }));
    tunnel?.on('down', (why) => {
      // Services at a base URL do not ride the tunnel.
      for (const s of this.pool.endpoints) {
        if (!this.pool.routed(s.slot)) continue;
        this.pool.markDown(s.slot, { status: 'tunnel-down', reason: `tunnel down, reconnecting… (${why})` });
        this.probes[s.slot]!.load = null;
      }
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

  /** Every endpoint as the views show it, read from the pool's states now. */
  get snapshot(): readonly EndpointView[] {
    return this.pool.endpoints.map((s, slot) => ({
      id: s.id,
      endpoint: s.endpoint,
      status: viewStatus(s.status, this.waiting, this.excludedIds.has(s.id)),
      ...this.probes[slot]!,
      error: s.reason,
      via: this.tunnel?.routes.get(s.id)?.via ?? null,
      answered: s.answered,
      failures: s.failures,
      outrun: s.outrun,
    }));
  }

  get healthy(): number {
    return this.pool.endpoints.filter((s) => s.status === 'up').length;
  }

  get excluded(): string[] {
    return [...this.excludedIds];
  }

  toggleExclude(id: string): void {
    if (!this.excludedIds.delete(id)) this.excludedIds.add(id);
    this.announce();
  }

  /** New keys mean new request headers, and endpoints that refused the old ones may take these: a fresh pool on the same routes. */
  async setCredentials(credentials: PoolOptions['credentials']): Promise<void> {
    if (await sameKeys(this.poolOptions.credentials, credentials)) return;
    const old = this.pool;
    this.poolOptions = { ...this.poolOptions, credentials };
    this.pool = this.makePool(this.poolOptions);
    this.unsubscribe();
    this.unsubscribe = this.pool.onStatus(() => this.paced.call());
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
    const pool = this.pool;
    const reports = await checkHealth(pool, this.closing.signal);
    const loads = await Promise.all(reports.map((r, slot) => (r.status === 'up' ? readLoad(pool, slot) : null)));
    if (pool === this.pool && !this.closing.signal.aborted) this.record(reports, loads);
  }

  /**
   * `Swarm: Wait for Servers`: health rounds until every endpoint is up (or `healthTimeoutMs` after
   * the first one was); meanwhile endpoints not answering yet show `booting` rather than `down`.
   * Returns how many are up, and the first endpoint that refused our credentials (the wait stops there).
   */
  async waitForServers(options: { intervalMs: number; healthTimeoutMs: number; signal: AbortSignal; onRound: (healthy: number, total: number) => void }): Promise<{ healthy: number; denied: EndpointHealthReport | null }> {
    this.waiting = true;
    this.announce();
    const pool = this.pool;
    const signal = AbortSignal.any([options.signal, this.closing.signal]);
    let denied: EndpointHealthReport | null = null;
    try {
      ({ denied } = await waitForHealthy(pool, {
        intervalMs: options.intervalMs,
        healthTimeoutMs: options.healthTimeoutMs,
        signal,
        onRound: (_healthy, total, reports) => {
          // A round cut short by the cancel reports every endpoint failing: that says nothing of them.
          if (pool === this.pool && !signal.aborted) this.record(reports);
          options.onRound(this.healthy, total);
        },
      }));
    } finally {
      this.waiting = false;
      this.announce();
    }
    return { healthy: this.healthy, denied };
  }

  /** A round of health checks into the pool's states; what else they saw into the probes. */
  private record(reports: readonly EndpointHealthReport[], loads?: ReadonlyArray<EndpointLoad | null>): void {
    recordHealth(this.pool, reports);
    reports.forEach((report, slot) => {
      const probe = this.probes[slot]!;
      probe.model = report.models[0]?.id ?? probe.model;
      probe.maxModelLen = report.models[0]?.maxModelLen ?? probe.maxModelLen;
      probe.latencyMs = report.latencyMs;
      if (loads) probe.load = loads[slot] ?? null;
    });
    this.announce();
  }

  /** Tells the views now (not on the throttle's next beat): whoever awaited a refresh reads it done. */
  private announce(): void {
    this.paced.call();
    this.paced.flush();
  }

  startPolling(intervalSeconds: number): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), intervalSeconds * 1000);
  }

  async dispose(): Promise<void> {
    clearInterval(this.timer);
    this.closing.abort();
    this.paced.cancel();
    this.unsubscribe();
    this.changed.dispose();
    await this.pool.close();
    await this.tunnel?.close();
    await this.disposeExtra();
  }
}

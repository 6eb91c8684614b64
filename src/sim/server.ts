import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import type { Endpoint } from '../core/endpoints/endpoint.ts';
import type { InferenceBackend } from './backend.ts';
import { chatApi, chatBatchApi } from './chat.ts';
import { serveEmbeddings, unsupportedApi } from './embeddings.ts';
import { completionsApi } from './completions.ts';
import { Engine, type SimEngine, type Timing } from './engine.ts';
import { GPUS, stepCosts } from './step-model.ts';
import { VllmEngine } from './vllm-engine.ts';
import { SimError } from './errors.ts';
import { FaultInjector } from './faults.ts';
import { serveGeneration, type GenerationApi, type GenerationContext } from './generation.ts';
import { readBody, sendJson, sendText } from './http.ts';
import { nextTurn } from './turns.ts';
import { Metrics, type EngineGauges, type SchedulerCounters } from './metrics.ts';
import { modelList } from './models.ts';
import { DEFAULT_SIM_OPTIONS, resolveSimOptions, type SimOptions } from './options.ts';
import { detokenize, tokenize } from './tokenize-api.ts';
import { parseBody, type Body } from './validation.ts';
import { versionProfile } from './versions.ts';

export interface SimStats {
  /** Keyed `${method} ${path} ${status}`, e.g. 'POST /v1/completions 200'. */
  httpRequests: Record<string, number>;
  /** POST completions + chat received (including rejected, faulted and reset ones). */
  generationRequests: number;
  /** Prompts across generation requests that parsed. */
  promptsReceived: number;
  /** Modeled busy time: union of intervals in which >= 1 sequence was running (with data parallelism, the busiest engine's). */
  busyMs: number;
  /** Sequences holding a slot, and waiting for one, now. */
  running: number;
  waiting: number;
  /** The vLLM scheduler model's counters summed over engines; absent with the fixed-latency model. */
  scheduler?: Omit<SchedulerCounters, 'blocks' | 'blockSize'>;
}

/** What `setFaults` changes on a running server; an option given as `undefined` goes back to its default. */
export type RuntimeFaults = Partial<
  Pick<SimOptions, 'hang' | 'faultRate' | 'faultStatus' | 'faultAfter' | 'dieAfter' | 'slowFactor' | 'healthStatus' | 'stallAfterChunks' | 'dropAfterChunks'>
> & {
  /** true: reset every open and every new connection, like a crashed vLLM whose port stays bound; false: serve again. */
  dead?: boolean;
};

const KNOWN_PATHS: readonly string[] = ['/health', '/ping', '/load', '/metrics', '/version', '/tokenize', '/detokenize', '/v1/models', '/v1/completions', '/v1/chat/completions', '/v1/embeddings'];
/** vLLM ≥ 0.19's list-of-conversations chat endpoint; older servers answer it 404. */
export const CHAT_BATCH_PATH = '/v1/chat/completions/batch';

/** Endpoints that answer a JSON body with JSON at once, without the engine. */
const UTILITIES: ReadonlyMap<string, (body: Body, options: SimOptions) => object> = new Map([
  ['/tokenize', tokenize],
  ['/detokenize', detokenize],
]);

/** One simulated vLLM OpenAI-compatible server on 127.0.0.1. */
export class SimServer {
  readonly host = '127.0.0.1' as const;
  private readonly options: SimOptions;
  private readonly http: Server;
  private readonly sockets = new Set<Socket>();
  private readonly faults: FaultInjector;
  private readonly context: GenerationContext;
  private readonly apis: ReadonlyMap<string, GenerationApi>;
  private readonly known: ReadonlySet<string>;
  private readonly utilities: ReadonlyMap<string, (body: Body, options: SimOptions) => object>;
  private readonly created = Math.floor(Date.now() / 1000);
  private portNumber = 0;
  private started = false;
  private bootTimer: NodeJS.Timeout | undefined;
  /** Generation and embedding requests being answered now: vLLM's server load (`GET /load`). */
  private load = 0;

  /**
   * With a `backend` (the llama engine), generation, /tokenize and /detokenize are real inference;
   * timing options then do nothing, faults and health still apply.
   */
  constructor(
    options: Partial<SimOptions> = {},
    private readonly backend?: InferenceBackend,
  ) {
    this.options = resolveSimOptions(backend ? { ...options, maxModelLen: backend.maxModelLen } : options);
    this.faults = new FaultInjector(this.options);
    this.known = new Set(this.options.chatBatch ? [...KNOWN_PATHS, CHAT_BATCH_PATH] : KNOWN_PATHS);
    const metrics = new Metrics(this.options.model, this.known);
    const timing = (): Timing => {
      const { ttftMs, tpotMs, slowFactor } = this.options;
      return { ttftMs: ttftMs * slowFactor, tpotMs: tpotMs * slowFactor };
    };
    const engines = Array.from({ length: this.options.dataParallel }, (): SimEngine => this.engine(timing, metrics));
    this.context = { options: this.options, engines, metrics };
    this.apis = new Map([
      ['/v1/completions', completionsApi(this.options)],
      ['/v1/chat/completions', chatApi(this.options)],
      ...(this.options.chatBatch ? [[CHAT_BATCH_PATH, chatBatchApi(this.options)] as const] : []),
    ]);
    this.utilities = backend
      ? new Map([
          ['/tokenize', (body: Body, o: SimOptions) => backend.tokenize(body, o)],
          ['/detokenize', (body: Body, o: SimOptions) => backend.detokenize(body, o)],
        ])
      : UTILITIES;
    this.http = createServer((req, res) => this.route(req, res));
    // Clients keep pooled connections; long batches must not be cut by server-side timeouts.
    this.http.keepAliveTimeout = 65_000;
    this.http.headersTimeout = 66_000;
    this.http.requestTimeout = 0;
    this.http.on('connection', (socket: Socket) => {
      if (this.faults.isDead) return void socket.resetAndDestroy();
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  private engine(timing: () => Timing, metrics: Metrics): SimEngine {
    const o = this.options;
    const observe = (t: Parameters<Metrics['sequenceTimed']>[0]) => metrics.sequenceTimed(t);
    if (o.scheduler === 'fixed') return new Engine(o.maxNumSeqs, o.requestOverheadMs, timing, observe);
    return new VllmEngine(
      {
        maxNumSeqs: o.maxNumSeqs,
        maxNumBatchedTokens: o.maxNumBatchedTokens!,
        kvCacheTokens: o.kvCacheTokens!,
        requestOverheadMs: o.requestOverheadMs,
        enablePrefixCaching: o.enablePrefixCaching,
        costs: stepCosts(GPUS[o.gpu]!),
        slowFactor: () => this.options.slowFactor,
      },
      observe,
    );
  }

  get port(): number {
    return this.portNumber;
  }

  /** The served model name. */
  get model(): string {
    return this.options.model;
  }

  get endpoint(): Endpoint {
    return { host: this.host, port: this.portNumber, tags: {} };
  }

  /**
   * Listens on `port` (0 = picked by the OS). With bootMs the port is chosen now but nothing
   * listens until bootMs elapsed, so clients see connection refused, as while vLLM loads a model.
   */
  async start(port = 0): Promise<void> {
    if (this.started) throw new Error('SimServer already started');
    this.started = true;
    if (this.options.bootMs <= 0) return this.listen(port);
    this.portNumber = port || (await freePort(this.host));
    this.bootTimer = setTimeout(() => {
      this.bootTimer = undefined;
      this.listen(this.portNumber).catch((err: Error) => process.emitWarning(`sim server failed to listen after boot: ${err.message}`));
    }, this.options.bootMs);
  }

  stats(): SimStats {
    const { metrics, engines } = this.context;
    const gauges = this.gauges();
    return {
      httpRequests: metrics.httpRequests(),
      generationRequests: this.faults.generationRequests,
      promptsReceived: metrics.promptsReceived,
      busyMs: engines.reduce((m, e) => Math.max(m, e.busyMs()), 0),
      running: gauges.reduce((total, g) => total + g.running, 0),
      waiting: gauges.reduce((total, g) => total + g.waiting, 0),
      ...(this.options.scheduler === 'vllm' ? { scheduler: sumCounters(this.counters()) } : {}),
    };
  }

  /**
   * Changes how the running server misbehaves, for chaos tests: new requests see the new faults at
   * once, open streams at their next event, running sequences keep their pace. Throws RangeError on
   * nonsense, changing nothing.
   */
  setFaults(faults: RuntimeFaults): void {
    const { dead, ...knobs } = faults;
    const next = resolveSimOptions({ ...this.options, ...knobs });
    for (const key of Object.keys(knobs) as Array<keyof typeof knobs>) {
      Object.assign(this.options, { [key]: knobs[key] === undefined ? DEFAULT_SIM_OPTIONS[key] : next[key] });
    }
    if (dead === undefined) return;
    this.faults.isDead = dead;
    if (dead) for (const socket of this.sockets) socket.resetAndDestroy();
  }

  /** Stops listening and drops every connection, hung requests included; their slots and timers go with them. */
  async close(): Promise<void> {
    clearTimeout(this.bootTimer);
    this.bootTimer = undefined;
    const closed = this.http.listening ? new Promise<void>((resolve) => this.http.close(() => resolve())) : Promise.resolve();
    for (const socket of this.sockets) socket.destroy();
    await closed;
    await this.backend?.close();
  }

  /** Each engine's sequences running and waiting, and its slots. */
  private gauges(): EngineGauges[] {
    return this.backend?.gauges() ?? this.context.engines.map((e) => e.gauges());
  }

  private counters(): SchedulerCounters[] {
    return this.backend ? [] : this.context.engines.flatMap((e) => (e.counters ? [e.counters()] : []));
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(port, this.host, () => {
        this.http.off('error', reject);
        this.portNumber = (this.http.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const arrivedAt = performance.now();
    if (this.faults.isDead) return void req.socket.resetAndDestroy();
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0]!;
    // Counted when the exchange ends, however: prometheus-fastapi-instrumentator records a request whose
    // client went away too (in its `finally`, as 500 when no response had started).
    res.once('close', () => this.context.metrics.recordHttp(method, path, res.headersSent ? res.statusCode : 500));
    // vLLM's auth middleware answers exactly this, before routing.
    if (this.options.apiKey && path.startsWith('/v1') && req.headers.authorization !== `Bearer ${this.options.apiKey}`) {
      return sendJson(res, 401, { error: 'Unauthorized' });
    }
    const api = this.apis.get(path);
    if (method === 'POST' && (api || path === '/v1/embeddings')) return void this.generate(api ?? null, req, res, path, arrivedAt);
    const utility = this.utilities.get(path);
    if (utility && method === 'POST') return void this.answer(req, res, (text) => sendJson(res, 200, utility(parseBody(text), this.options)));
    if (method === 'GET' && path === '/version') return sendJson(res, 200, { version: versionProfile(this.options.vllmVersion ?? 'latest').version });
    // SageMaker's /ping is vLLM's /health under another name, for GET and POST.
    if (path === '/health' && method === 'GET') return void res.writeHead(this.faults.healthStatus()).end();
    if (path === '/ping' && (method === 'GET' || method === 'POST')) return void res.writeHead(this.faults.healthStatus()).end();
    // As vLLM with --enable-server-load-tracking: requests in flight on the load-aware routes.
    if (method === 'GET' && path === '/load') return sendJson(res, 200, { server_load: this.load });
    if (method === 'GET' && path === '/v1/models') return sendJson(res, 200, modelList(this.options, this.created));
    if (method === 'GET' && path === '/metrics') {
      const text = this.context.metrics.render(this.gauges(), this.options.cacheMetric, this.options.tokenLatencyMetric, this.counters());
      return sendText(res, 200, 'text/plain; version=0.0.4; charset=utf-8', text);
    }
    // FastAPI's answers for unknown routes and wrong methods.
    if (this.known.has(path)) sendJson(res, 405, { detail: 'Method Not Allowed' });
    else sendJson(res, 404, { detail: 'Not Found' });
  }

  /** A generation request, or with `api` null an embeddings request; faults apply to both. */
  private async generate(api: GenerationApi | null, req: IncomingMessage, res: ServerResponse, path: string, arrivedAt: number): Promise<void> {
    const verdict = this.faults.onGenerationRequest();
    if (verdict === 'die') return void req.socket.resetAndDestroy();
    this.load++;
    res.once('close', () => this.load--);
    await this.answer(req, res, async (text) => {
      if (verdict === 'hang') return; // held open until the client or close() drops it
      await nextTurn();
      if (req.socket.destroyed) return; // the client left while it waited: nothing to schedule
      if (verdict === 'fault') throw new SimError(this.options.faultStatus, `Simulated fault (HTTP ${this.options.faultStatus})`);
      const unsupported = unsupportedApi(this.options.task, path);
      if (unsupported) throw unsupported;
      if (api && this.backend) return this.backend.serve(path, parseBody(text), res, this.context);
      if (api) serveGeneration(api, parseBody(text), res, this.context, arrivedAt);
      else serveEmbeddings(parseBody(text), res, this.options);
    });
  }

  /** Reads the whole body and runs `serve` on it, answering what it throws as a vLLM error body. */
  private async answer(req: IncomingMessage, res: ServerResponse, serve: (text: string) => void | Promise<void>): Promise<void> {
    let text: string;
    try {
      text = await readBody(req);
    } catch {
      return; // the client went away mid-body
    }
    try {
      await serve(text);
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      const error = err instanceof SimError ? err : new SimError(500, String(err));
      sendJson(res, error.status, error.body(this.options.errorFormat));
    }
  }
}

function sumCounters(all: readonly SchedulerCounters[]): Omit<SchedulerCounters, 'blocks' | 'blockSize'> {
  const sum = (f: (c: SchedulerCounters) => number) => all.reduce((s, c) => s + f(c), 0);
  return { preemptions: sum((c) => c.preemptions), prefixQueries: sum((c) => c.prefixQueries), prefixHits: sum((c) => c.prefixHits), steps: sum((c) => c.steps), modeledMs: sum((c) => c.modeledMs) };
}

/** A port the OS considers free right now, for servers that start listening later. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

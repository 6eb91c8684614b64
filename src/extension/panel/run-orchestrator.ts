import { copyFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { compareBatching, medianRound, TEMPLATE_PATHS, type Arm, type Comparison } from '../../core/run/compare.ts';
import { generationParams, subpool, summarize, type ReduceOutcome, type RunOptions, type RunReport, type SwarmPool } from '../../core/index.ts';
import { speedup } from '../../core/run/stats.ts';
import type { ArmShown, ComparisonView, HostMessage, OpenedRun, ResultRow, RunContext, RunRecord, RunRequest } from '../../panel/protocol.ts';
import { rowsJsonl } from '../../panel/result-rows.ts';
import type { SwarmConnection } from '../connection.ts';
import { resultsFile } from '../results-file.ts';
import { watchRun, withRunProgress } from '../run-progress.ts';
import type { Services } from '../services.ts';
import { armShown, type RunHistory, type SavedRun } from './run-history.ts';
import type { Continuation } from './run-continuation.ts';
import { RunRecorder } from './run-recorder.ts';
import { treeReduceSteps } from './pattern-steps.ts';
import { LaunchError, prepare, runOptions, type Prepared } from './run-request-plan.ts';

export interface Launch {
  request: RunRequest;
  /** What the history and the panel call it; made from the request when absent. */
  label?: string;
  /** From the palette: also a cancellable notification with this title. */
  notify?: string;
  /** Some prompts of a saved run, merged back into a copy of its results (run-continuation.ts). */
  continued?: Continuation;
}

/** A finished run as it was saved, with what the panel shows of it. */
export interface Launched {
  saved: SavedRun;
  rows: ResultRow[];
  resultsUri: vscode.Uri;
  cancelled: boolean;
  /** Whether the panel heard the run's end (else it is shown with `showRun` when the panel comes). */
  delivered: boolean;
  /** Not a comparison: the run's report. */
  report?: RunReport<unknown>;
  /** A comparison: the rounds of both arms (`rows` are its batched arm's). */
  comparison?: Comparison;
}

/** A run going: its id at once (the panel's `run` request answers it), the run when it is over. */
export interface Going {
  runId: string;
  done: Promise<Launched>;
}

/**
 * Runs what the panel's Run button (or a palette command) asks for on the connected swarm, through
 * the core's patterns, and records it with one RunRecorder whatever its kind: a single run follows
 * its Run; a comparison (core/compare.ts, the fair batched-vs-individual one) follows each arm.
 * Status bar and notification come from run-progress.ts.
 */
export class RunOrchestrator {
  /**
   * Every ACTIVE run (see the lifecycle in protocol.ts): from `runStarted` until its record is saved
   * and the history list naming it is sent, when `released` settles. Going while its recorder has
   * not said `runFinished`; finishing (being saved) after.
   */
  private readonly active = new Map<string, { recorder: RunRecorder; cancel(): void; released: Promise<void> }>();

  constructor(
    private readonly services: Services,
    private readonly history: RunHistory,
    private readonly post: (message: HostMessage) => boolean,
  ) {}

  /** Whether a run is going (any origin): its rows still coming. */
  get busy(): boolean {
    return [...this.active.values()].some((a) => !a.recorder.hasFinished);
  }

  isGoing(runId: string): boolean {
    const a = this.active.get(runId);
    return Boolean(a && !a.recorder.hasFinished);
  }

  /** The rows so far of a run going (of the arm going, in a comparison), whole and in input order; undefined once it finished. */
  rowsGoing(runId: string): ResultRow[] | undefined {
    const a = this.active.get(runId);
    return a && !a.recorder.hasFinished ? a.recorder.rows : undefined;
  }

  /** Cancels every run going; finished results are kept. */
  cancel(): boolean {
    const going = [...this.active.values()].filter((a) => !a.recorder.hasFinished);
    for (const a of going) a.cancel();
    return going.length > 0;
  }

  /** The page drew progress message `seq` of `runId` (flow control: see LiveRows). */
  progressSeen(runId: string, seq: number): void {
    this.active.get(runId)?.recorder.progressSeen(seq);
  }

  /** A webview that just said `ready` hears each active run from its start (and its end, when said). */
  resync(): void {
    for (const a of this.active.values()) a.recorder.resync();
  }

  /** Starts a run; throws LaunchError (before anything is sent or saved) when it cannot start. */
  async launch(launch: Launch): Promise<Going> {
    // A run that said `runFinished` is being saved: it is let go first, so its record is listed before this run starts.
    await Promise.all([...this.active.values()].filter((a) => a.recorder.hasFinished).map((a) => a.released));
    const connection = this.services.session.connection;
    if (!connection) throw new LaunchError('connect a hostfile (or start the local simulator) first');
    const request = launch.request;
    const prepared = prepare(request);
    const options: RunOptions = { ...runOptions(request), exclude: connection.excluded };
    const file = await resultsFile(this.services.context.globalStorageUri, request.compare ? 'compare' : request.pattern);
    const runId = basename(file.uri.fsPath, '.jsonl');
    const eligible = eligibleEndpoints(connection, request.tags).length;
    const continued = launch.continued;
    if (continued) await copyFile(continued.from, file.uri.fsPath);
    const recorder = new RunRecorder(
      {
        type: 'runStarted',
        runId,
        kind: request.compare ? 'comparison' : 'single',
        pattern: request.pattern,
        label: launch.label ?? prepared.label,
        total: continued ? continued.prompts.length : prepared.total(eligible),
        rounds: request.compare?.rounds ?? 1,
        startedAt: new Date().toISOString(),
        context: runContext(connection, request, options, eligible),
        ...(continued ? { prompts: continued.prompts } : prepared.prompts.length ? { prompts: prepared.prompts.map((p) => p.prompt) } : {}),
        ...(request.compare ? { comparison: { cacheSalt: request.compare.cacheSalt, templatePaths: { ...TEMPLATE_PATHS } } } : {}),
      },
      this.history,
      this.post,
      continued,
    );
    const entry = { recorder, cancel: () => {}, released: Promise.resolve() };
    this.active.set(runId, entry);
    const run = request.compare ? this.compare(recorder, launch, prepared, options, file.uri, entry) : this.single(recorder, launch, prepared, options, file.uri, entry);
    // A run that throws still ends with a saved record and its runFinished: the panel never waits forever.
    const ended = run.catch(async (err: Error) => {
      await recorder.settle();
      const empty = summarize([], { requests: new Map(), paths: new Map(), usage: new Map(), model: null }, 0, { pattern: request.pattern, batch: request.batch });
      const saved: SavedRun = { record: this.record(recorder, request.compare ? 'compare' : empty.mode, empty, file.uri, false, err.message), request };
      await recorder.finish(saved);
      throw err;
    });
    // Asked while the run runs; saved with its record (a server that does not say leaves it out).
    const versions = connection.swarm.serverVersions();
    const done = run
      .then(
        async (launched) => {
          const context = launched.saved.record.context;
          // A hung endpoint's /version must not hold the run's end: half a second more at most.
          const said = (await Promise.race([versions, new Promise<string[]>((r) => setTimeout(() => r([]), 500).unref())])).join(', ');
          if (context && said) context.serverVersion = said;
          return { ...launched, delivered: await recorder.finish(launched.saved) };
        },
        () => ended as Promise<never>,
      )
      .finally(() => this.active.delete(runId));
    entry.released = done.then(
      () => {},
      () => {},
    );
    return { runId, done };
  }

  private async single(recorder: RunRecorder, launch: Launch, prepared: Prepared, options: RunOptions, uri: vscode.Uri, entry: { cancel(): void }): Promise<Omit<Launched, 'delivered'>> {
    const { request } = launch;
    const { label } = recorder.started;
    const total = launch.continued?.todo.length ?? recorder.started.total; // what this run sends
    const run = prepared.make(routed(this.services.session.connection!.swarm, request), options);
    entry.cancel = () => run.cancel();
    recorder.follow(run, uri.fsPath);
    if (unstreamedBatch(request)) recorder.watchServers(this.runEndpoints(request));
    const report = await (launch.notify ? withRunProgress(this.services, run, launch.notify, total) : watchRun(this.services, run, label, total).done);
    await recorder.settle();
    // A continued run's record describes its whole results file: the kept rows and its own.
    if (launch.continued) report.summary = mergedSummary(recorder.rows, report.summary);
    const outcome = report.outcome as ReduceOutcome | undefined;
    const reduce = request.pattern === 'tree-reduce' && outcome ? treeReduceSteps(outcome, report.results, request.fanin ?? 50, Boolean(request.items?.length)) : prepared.view?.(report);
    const record = this.record(recorder, report.summary.mode, report.summary, uri, report.cancelled, report.error);
    const saved: SavedRun = { record: report.drained ? { ...record, drained: true } : record, request, ...(reduce ? { reduce } : {}) };
    return { saved, rows: recorder.rows, resultsUri: uri, cancelled: report.cancelled, report };
  }

  private async compare(recorder: RunRecorder, launch: Launch, prepared: Prepared, options: RunOptions, uri: vscode.Uri, entry: { cancel(): void }): Promise<Omit<Launched, 'delivered'>> {
    const { request } = launch;
    const { rounds, cacheSalt } = request.compare!;
    const { label, total, runId } = { ...recorder.started };
    const individualPath = join(dirname(uri.fsPath), `${runId}-individual.jsonl`);
    // Every round's rows go to a file of their own; the median round of each arm is kept (its rows
    // are the ones its figures describe), the others are removed once the comparison is over.
    const roundFile = (a: ArmShown) => join(dirname(uri.fsPath), `${runId}.${a.arm}-${a.round}.part`);
    const followed: ArmShown[] = [];
    let report: Thenable<RunReport<unknown>> | undefined;
    let lastArm: RunReport<unknown> | undefined;
    const handle = compareBatching(routed(this.services.session.connection!.swarm, request), prepared.prompts, {
      ...options,
      rounds,
      cacheSalt,
      onArm: (run, arm: Arm, round) => {
        const title = `${launch.notify ?? label} — ${arm}, round ${round + 1}/${rounds}`;
        followed.push({ arm, round });
        recorder.follow(run, roundFile({ arm, round }), { arm, round });
        if (arm === 'batched' && unstreamedBatch(request)) recorder.watchServers(this.runEndpoints(request));
        report = launch.notify ? withRunProgress(this.services, run, title, total) : watchRun(this.services, run, title, total).done;
      },
      onArmDone: async (figures) => {
        const finished = await report!;
        lastArm = finished;
        await recorder.armFinished(figures.arm, figures.round, finished.cancelled ? null : figures, finished.cancelled, finished.cancelled ? null : finished.error);
      },
    });
    entry.cancel = () => handle.cancel();
    const comparison = await handle.done;
    await recorder.settle();
    const batched = medianRound(comparison.rounds, 'batched');
    const individual = medianRound(comparison.rounds, 'individual');
    const times = speedup(comparison.rounds);
    if (batched && individual && times !== null) {
      this.services.runs.setComparison(
        `Batched sent ${batched.summary.httpRequests} HTTP requests where individual sent ${individual.summary.httpRequests}; median of ${rounds} round${rounds === 1 ? '' : 's'}: ${times.toFixed(2)}× speed-up.`,
      );
    }
    // The first arm is always batched: cancelled before a batched round finished, the record keeps its rows so far.
    const summary = batched?.summary ?? individual?.summary ?? lastArm?.summary;
    if (!summary || !followed.length) throw new Error(comparison.error ?? 'the comparison produced nothing');
    const kept: Partial<Record<Arm, number>> = { batched: batched?.round ?? 0, ...(individual ? { individual: individual.round } : {}) };
    for (const a of followed) {
      const to = kept[a.arm] !== a.round ? undefined : a.arm === 'batched' ? uri.fsPath : individualPath;
      await (to ? rename(roundFile(a), to) : rm(roundFile(a), { force: true }));
    }
    const view: ComparisonView = { rounds: comparison.rounds, cacheSalt, templatePaths: comparison.templatePaths, kept };
    const saved: SavedRun = {
      record: this.record(recorder, 'compare', summary, uri, comparison.cancelled, comparison.error),
      request,
      comparison: view,
      ...(individual ? { individualFile: basename(individualPath) } : {}),
    };
    if (comparison.error && !comparison.cancelled) this.services.log.error(`compare ${runId}: ${comparison.error}`);
    const rows = await this.history.rows(saved);
    return { saved, rows, resultsUri: uri, cancelled: comparison.cancelled, comparison };
  }

  /** The endpoints a run may use (see eligibleEndpoints), as a pool of the connection's. */
  private runEndpoints(request: RunRequest): SwarmPool {
    const connection = this.services.session.connection!;
    const ids = new Set(eligibleEndpoints(connection, request.tags).map((v) => v.id));
    return connection.swarm.narrow(connection.swarm.endpoints.filter((e) => ids.has(e.id)).map((e) => e.slot));
  }

  private record(recorder: RunRecorder, mode: RunRecord['mode'], summary: RunRecord['summary'], uri: vscode.Uri, cancelled: boolean, error: string | null): RunRecord {
    const s = recorder.started;
    return { id: s.runId, startedAt: s.startedAt, pattern: s.pattern, label: s.label, mode, summary, file: basename(uri.fsPath), cancelled, error: cancelled ? null : error, context: s.context };
  }
}

/** A finished run as `showRun` carries it (rows as JSONL: see OpenedRun); a comparison's rows are `arm`'s (its batched arm's by default). */
export function openedRun(saved: SavedRun, rows: readonly ResultRow[] | string, arm: Arm = 'batched'): OpenedRun {
  const resultsJsonl = typeof rows === 'string' ? rows : rowsJsonl(rows);
  const shown = saved.comparison ? armShown(saved, arm) : undefined;
  return { record: saved.record, resultsJsonl, ...(saved.reduce ? { reduce: saved.reduce } : {}), ...(saved.comparison ? { comparison: saved.comparison } : {}), ...(shown ? { arm: shown } : {}) };
}

/**
 * The figures of a continued run's rows (kept and new): counts and latencies over all of them;
 * wall time, HTTP requests, tokens, throughputs and ITL are this run's own (the core's summarize,
 * fed its tally; kept prompts answered in another run's wall time count in no rate).
 */
function mergedSummary(rows: readonly ResultRow[], own: RunRecord['summary']): RunRecord['summary'] {
  const usage = own.promptTokens === null ? new Map() : new Map([['run', { promptTokens: own.promptTokens, completionTokens: own.completionTokens ?? 0 }]]);
  const tally = { requests: new Map(own.endpoints.map((e) => [e.endpoint, e.requests])), paths: new Map(Object.entries(own.requestsByPath)), usage, model: own.model };
  const merged = summarize(rows, tally, own.wallMs, { pattern: own.pattern, batch: own.mode === 'batched', stream: own.streamed });
  return { ...merged, promptThroughput: own.promptThroughput, itl: own.itl };
}

/** The connection's pool, routed as the request asks (the panel's routing choice). */
function routed(pool: SwarmPool, request: RunRequest): SwarmPool {
  return request.route ? subpool.routedBy(pool, request.route) : pool;
}

/** Endpoints a run may use: carrying the asked tags, not excluded, not down (as the panel's Compose counts them). */
function eligibleEndpoints(connection: SwarmConnection, tags: Array<[string, string]>) {
  return connection.snapshot.filter((v) => v.status !== 'excluded' && v.status !== 'down' && v.status !== 'tunnel-down' && tags.every(([k, val]) => v.endpoint.tags[k] === val));
}

/** Batches whose answers come only at their end: the servers' /metrics then show the run moving. */
function unstreamedBatch(request: RunRequest): boolean {
  return request.batch && !request.stream && (request.pattern === 'scatter' || request.pattern === 'map');
}

function runContext(connection: SwarmConnection, request: RunRequest, options: RunOptions, endpoints: number): RunContext {
  const served = connection.snapshot.find((v) => v.model)?.model ?? null;
  return {
    hostfile: connection.source.label,
    endpoints,
    ...(connection.source.job ? { job: connection.source.job } : {}),
    model: options.model ?? served,
    params: {
      batch: request.batch,
      ...(options.stream ? { stream: true } : {}),
      tags: request.tags,
      ...(request.fanin ? { fanin: request.fanin } : {}),
      ...generationParams({ ...options, model: undefined }), // the model is the context's own field
      ...(request.route ? { route: request.route } : {}),
    },
  };
}

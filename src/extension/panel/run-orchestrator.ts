import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { compareBatching, medianRound, TEMPLATE_PATHS, type Arm, type Comparison } from '../../core/compare.ts';
import { OrderedJsonlWriter, type ReduceOutcome, type RunOptions, type RunReport } from '../../core/index.ts';
import type { ComparisonView, HostMessage, ResultRow, RunRecord, RunRequest } from '../../panel/protocol.ts';
import type { SwarmConnection } from '../connection.ts';
import { resultsFile } from '../results-file.ts';
import { watchRun, withRunProgress } from '../run-progress.ts';
import type { Services } from '../services.ts';
import { LiveRun, ProgressPace } from './live-run.ts';
import type { RunHistory, SavedRun } from './run-history.ts';
import { LaunchError, prepare, runOptions, type Prepared } from './run-request-plan.ts';

export interface Launch {
  request: RunRequest;
  /** What the history and the panel call it; made from the request when absent. */
  label?: string;
  /** From the palette: also a cancellable notification with this title. */
  notify?: string;
}

/** A finished run as it was saved, with what the panel shows of it. */
export interface Launched {
  saved: SavedRun;
  rows: ResultRow[];
  resultsUri: vscode.Uri;
  cancelled: boolean;
  /** Not a comparison: the run's report. */
  report?: RunReport<unknown>;
  /** A comparison: the rounds of both arms. */
  comparison?: Comparison;
}

/**
 * Runs what the panel's Run button (or a palette command) asks for on the connected swarm, through
 * the core's patterns: results file written as results arrive (prompt included in each line), status
 * bar, throttled live progress to the panel, a history record when done. `compare` runs the fair
 * batched-vs-individual comparison (core/compare.ts): each arm is announced as a run with the
 * comparison's id and its arm and round, one after the other; `comparison` after each arm.
 */
export class RunOrchestrator {
  private readonly active = new Set<{ live: LiveRun | undefined; cancel(): void }>();
  private readonly pace = new ProgressPace();

  constructor(
    private readonly services: Services,
    private readonly history: RunHistory,
    private readonly post: (message: HostMessage) => boolean,
  ) {}

  /** Whether a run is going (any origin). */
  get busy(): boolean {
    return this.active.size > 0;
  }

  /** Cancels every run going; finished results are kept. */
  cancel(): boolean {
    for (const a of this.active) a.cancel();
    return this.active.size > 0;
  }

  /** A webview that just said `ready` gets each live run from its start. */
  resync(): void {
    for (const a of this.active) a.live?.resync();
  }

  async launch(launch: Launch): Promise<Launched> {
    const connection = this.services.session.connection;
    if (!connection) throw new LaunchError('connect a hostfile (or start the local simulator) first');
    const request = launch.request;
    const prepared = prepare(request);
    const label = launch.label ?? prepared.label;
    const options: RunOptions = { ...runOptions(request), exclude: connection.excluded };
    return request.compare ? this.compare(connection, launch, prepared, label, options) : this.single(connection, launch, prepared, label, options);
  }

  private async single(connection: SwarmConnection, launch: Launch, prepared: Prepared, label: string, options: RunOptions): Promise<Launched> {
    const request = launch.request;
    const file = await resultsFile(this.services.context.globalStorageUri, request.pattern);
    const id = basename(file.uri.fsPath, '.jsonl');
    const startedAt = new Date().toISOString();
    const run = prepared.make(connection.swarm, options);
    const writer = new OrderedJsonlWriter(file.uri.fsPath);
    const live = new LiveRun({ type: 'runStarted', runId: id, pattern: request.pattern, total: prepared.prompts.length, label }, run, this.post, this.pace);
    run.on('result', (r) => {
      const row = { ...r, prompt: prepared.promptOf(r) };
      writer.add(row);
      live.add(row);
    });
    const entry = { live, cancel: () => run.cancel() };
    this.active.add(entry);
    try {
      const report = await (launch.notify ? withRunProgress(this.services, run, launch.notify) : watchRun(this.services, run, label).done);
      await writer.close();
      const outcome = report.outcome as ReduceOutcome | undefined;
      const reduce = request.pattern === 'tree-reduce' && outcome ? { text: outcome.text, levels: outcome.levels } : undefined;
      const record: RunRecord = {
        id,
        startedAt,
        pattern: request.pattern,
        label,
        mode: report.summary.mode,
        summary: report.summary,
        file: basename(file.uri.fsPath),
        cancelled: report.cancelled,
        error: report.cancelled ? null : report.error,
      };
      const saved: SavedRun = { record, request, ...(reduce ? { reduce } : {}) };
      await this.save(saved);
      const rows = byIndex(live.rows);
      if (!(await live.finish(report, reduce))) this.post(showRunMessage(saved, rows));
      return { saved, rows, resultsUri: file.uri, cancelled: report.cancelled, report };
    } finally {
      this.active.delete(entry);
    }
  }

  private async compare(connection: SwarmConnection, launch: Launch, prepared: Prepared, label: string, options: RunOptions): Promise<Launched> {
    const request = launch.request;
    const { rounds, cacheSalt } = request.compare!;
    const file = await resultsFile(this.services.context.globalStorageUri, 'compare');
    const id = basename(file.uri.fsPath, '.jsonl');
    const individualPath = join(dirname(file.uri.fsPath), `${id}-individual.jsonl`);
    const startedAt = new Date().toISOString();
    const view: ComparisonView = { rounds: [], cacheSalt, templatePaths: { ...TEMPLATE_PATHS } };
    const entry: { live: LiveRun | undefined; cancel(): void } = { live: undefined, cancel: () => handle.cancel() };
    let arm: { live: LiveRun; writer: OrderedJsonlWriter | undefined; report: Thenable<RunReport<unknown>> } | undefined;
    let firstRows: ResultRow[] = [];
    let lastSummary: RunRecord['summary'] | undefined;

    const handle = compareBatching(connection.swarm, prepared.prompts, {
      ...options,
      rounds,
      cacheSalt,
      onArm: (run, which: Arm, round) => {
        const title = `${launch.notify ?? label} — ${which}, round ${round + 1}/${rounds}`;
        const live = new LiveRun({ type: 'runStarted', runId: id, pattern: request.pattern, total: prepared.prompts.length, label, arm: which, round }, run, this.post, this.pace);
        const writer = round === 0 ? new OrderedJsonlWriter(which === 'batched' ? file.uri.fsPath : individualPath) : undefined;
        run.on('result', (r) => {
          const row = { ...r, prompt: prepared.promptOf(r) };
          writer?.add(row);
          live.add(row);
        });
        entry.live = live;
        arm = { live, writer, report: launch.notify ? withRunProgress(this.services, run, title) : watchRun(this.services, run, title).done };
      },
      onArmDone: async (figures) => {
        const { live, writer, report } = arm!;
        const finished = await report;
        await writer?.close();
        await live.finish(finished);
        if (figures.round === 0 && figures.arm === 'batched') firstRows = byIndex(live.rows);
        lastSummary = figures.summary;
        if (!finished.cancelled) view.rounds.push(figures);
        this.post({ type: 'comparison', comparison: { ...view, rounds: [...view.rounds] } });
      },
    });
    this.active.add(entry);
    try {
      const comparison = await handle.done;
      const batched = medianRound(comparison.rounds, 'batched');
      const individual = medianRound(comparison.rounds, 'individual');
      if (batched && individual) {
        const speedup = individual.summary.wallMs / batched.summary.wallMs;
        this.services.runs.setComparison(
          `Batched sent ${batched.summary.httpRequests} HTTP requests where individual sent ${individual.summary.httpRequests}; median of ${rounds} round${rounds === 1 ? '' : 's'}: ${speedup.toFixed(2)}× speed-up.`,
        );
      }
      const summary = batched?.summary ?? individual?.summary ?? lastSummary;
      if (!summary) throw new Error(comparison.error ?? 'the comparison produced nothing');
      const comparisonView: ComparisonView = { rounds: comparison.rounds, cacheSalt, templatePaths: comparison.templatePaths };
      const record: RunRecord = {
        id,
        startedAt,
        pattern: request.pattern,
        label,
        mode: 'compare',
        summary,
        file: basename(file.uri.fsPath),
        cancelled: comparison.cancelled,
        error: comparison.cancelled ? null : (comparison.error ?? null),
      };
      const saved: SavedRun = { record, request, comparison: comparisonView, individualFile: basename(individualPath) };
      await this.save(saved);
      if (!this.post({ type: 'comparison', comparison: comparisonView })) this.post(showRunMessage(saved, firstRows));
      if (comparison.error && !comparison.cancelled) this.services.log.error(`compare: ${comparison.error}`);
      return { saved, rows: firstRows, resultsUri: file.uri, cancelled: comparison.cancelled, comparison };
    } finally {
      this.active.delete(entry);
    }
  }

  /**
   * Saves the record and refreshes the history list, before the run's last message, so the webview
   * knows the run's record when the run ends. (A webview that missed the end gets a showRun instead.)
   */
  private async save(saved: SavedRun): Promise<void> {
    await this.history.save(saved);
    this.post({ type: 'history', history: await this.history.list() });
  }
}

export function showRunMessage(saved: SavedRun, rows: ResultRow[]): Extract<HostMessage, { type: 'showRun' }> {
  return {
    type: 'showRun',
    record: saved.record,
    results: rows,
    ...(saved.reduce ? { reduce: saved.reduce } : {}),
    ...(saved.comparison ? { comparison: saved.comparison } : {}),
  };
}

function byIndex(rows: readonly ResultRow[]): ResultRow[] {
  return [...rows].sort((a, b) => a.index - b.index);
}


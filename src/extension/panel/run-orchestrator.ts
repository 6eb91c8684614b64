import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { compareBatching, medianRound, TEMPLATE_PATHS, type Arm, type Comparison } from '../../core/compare.ts';
import { broadcast, checkTreeReduce, mapGather, OrderedJsonlWriter, scatterGather, treeReduce, type PromptResult, type ReduceOutcome, type Run, type RunOptions, type RunReport, type SwarmPool } from '../../core/index.ts';
import { fillTemplate } from '../../core/plan.ts';
import type { ComparisonView, HostMessage, PromptRow, ResultRow, RunRecord, RunRequest } from '../../panel/protocol.ts';
import type { SwarmConnection } from '../connection.ts';
import { resultsFile } from '../results-file.ts';
import { watchRun, withRunProgress } from '../run-progress.ts';
import type { Services } from '../services.ts';
import { generationOptions, settings } from '../settings.ts';
import { LiveRun, ProgressPace } from './live-run.ts';
import type { RunHistory, SavedRun } from './run-history.ts';

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

/** A run the user cannot start as asked (no swarm, missing input); nothing was sent or saved. */
export class LaunchError extends Error {
  override name = 'LaunchError';
}

interface Prepared {
  label: string;
  /** Every prompt it answers, as rows (a tree-reduce's reduce prompts are made as it goes). */
  prompts: PromptRow[];
  make(pool: SwarmPool, options: RunOptions): Run<unknown>;
  promptOf(result: PromptResult): string;
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
      const record: RunRecord = { id, startedAt, pattern: request.pattern, label, mode: report.summary.mode, summary: report.summary, file: basename(file.uri.fsPath) };
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
      const record: RunRecord = { id, startedAt, pattern: request.pattern, label, mode: 'compare', summary, file: basename(file.uri.fsPath) };
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

/** Settings' model and max tokens, overridden by the request's. */
function runOptions(request: RunRequest): RunOptions {
  return {
    ...generationOptions(settings()),
    ...(request.model ? { model: request.model } : {}),
    ...(request.maxTokens ? { maxTokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    tags: request.tags,
  };
}

/** Checks the request's input and says how to run it; throws LaunchError on input that cannot run. */
function prepare(request: RunRequest): Prepared {
  const mode = request.batch ? 'batched' : 'individual';
  const need = (ok: unknown, what: string) => {
    if (!ok) throw new LaunchError(what);
  };
  switch (request.pattern) {
    case 'scatter': {
      need(request.prompts.length, 'the prompt set is empty');
      const prompts = request.prompts;
      return {
        label: request.compare ? `${count(prompts.length, 'prompt')} · batched vs individual × ${request.compare.rounds}` : `${count(prompts.length, 'prompt')} · ${mode}`,
        prompts,
        make: (pool, o) => scatterGather(pool, prompts, { ...o, batch: request.batch }),
        promptOf: (r) => prompts[r.index]?.prompt ?? '',
      };
    }
    case 'map': {
      const { template, items } = request;
      need(template?.trim(), 'map needs a template ({item} takes each item)');
      need(items?.length, 'map needs at least one item');
      const prompts = items!.map((item) => ({ prompt: fillTemplate(template!, { item }), input: { item } }));
      return {
        label: request.compare ? `${count(items!.length, 'item')} · batched vs individual × ${request.compare.rounds}` : `${count(items!.length, 'item')} · ${mode}`,
        prompts,
        make: (pool, o) => mapGather(pool, items!, template!, { ...o, batch: request.batch }),
        promptOf: (r) => prompts[r.index]?.prompt ?? '',
      };
    }
    case 'broadcast': {
      need(!request.compare, 'batched vs individual compares scatter and map runs');
      const prompt = request.prompt ?? '';
      need(prompt.trim(), 'broadcast needs a prompt');
      return { label: `broadcast: ${clip(prompt)}`, prompts: [], make: (pool, o) => broadcast(pool, prompt, o), promptOf: () => prompt };
    }
    case 'tree-reduce': {
      need(!request.compare, 'batched vs individual compares scatter and map runs');
      const items = request.items?.length ? request.items : undefined;
      const prompt = items ? request.template : request.prompt;
      need(prompt?.trim(), items ? 'tree-reduce over items needs a template' : 'tree-reduce needs a prompt');
      const input = { prompt: prompt!, reducePrompt: request.reducePrompt ?? '', ...(items ? { items } : {}), ...(request.fanin ? { fanin: request.fanin } : {}) };
      try {
        checkTreeReduce(input);
      } catch (err) {
        throw new LaunchError((err as Error).message);
      }
      const leaf = (r: PromptResult) => (items ? fillTemplate(prompt!, { item: String(items[r.index] ?? '') }) : prompt!);
      return {
        label: `tree-reduce of ${items ? count(items.length, 'item') : 'every endpoint'} (fan-in ${input.fanin ?? 50})`,
        prompts: [],
        make: (pool, o) => treeReduce(pool, input, o),
        promptOf: (r) => (r.level ? `(reduce level ${r.level}, group ${Number(r.input.group ?? 0) + 1}) ${input.reducePrompt}` : leaf(r)),
      };
    }
  }
}

function byIndex(rows: readonly ResultRow[]): ResultRow[] {
  return [...rows].sort((a, b) => a.index - b.index);
}

const count = (n: number, noun: string) => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
const clip = (s: string) => (s.length > 48 ? `${s.slice(0, 47)}…` : s).replace(/\s+/g, ' ');

import { readFile } from 'node:fs/promises';
import { isAbsolute, join, posix } from 'node:path';
import { summarize } from '../core/run/summary.ts';
import type { HistoryEntry, OpenedRun, Pattern, ResultRow, RunRecord } from '../panel/protocol.ts';
import { rowsJsonl } from '../panel/result-rows.ts';
import type { DetachedRun, RemoteRuns } from './detached-runs-remote.ts';

/** History ids of detached runs: their run id behind this, so they never meet a saved run's. */
const PREFIX = 'detached-';

/** The pattern command a detached run runs, as the panel names patterns. */
const PATTERNS: Record<string, Pattern> = { scatter: 'scatter', embed: 'scatter', broadcast: 'broadcast', reduce: 'tree-reduce', pipeline: 'pipeline', blackboard: 'blackboard' };

export function historyId(run: Pick<DetachedRun, 'id'>): string {
  return `${PREFIX}${run.id}`;
}

/** The detached run a History id names, among `runs`. */
export function detachedOf(id: string, runs: readonly DetachedRun[]): DetachedRun | undefined {
  return id.startsWith(PREFIX) ? runs.find((r) => historyId(r) === id) : undefined;
}

/** A detached run as History lists it: its status file's counts, and where it lives. */
export function detachedEntry(run: DetachedRun): HistoryEntry {
  const { prompts, ok, failed, cancelled, wallMs, promptThroughput } = recordOf(run, []).summary;
  return { ...recordOf(run, []), summary: { prompts, ok, failed, cancelled, wallMs, promptThroughput } };
}

/** A detached run opened: its rows so far (in input order) and their figures. */
export function detachedOpened(run: DetachedRun, rows: readonly ResultRow[]): OpenedRun {
  return { record: recordOf(run, rows), resultsJsonl: rowsJsonl(rows) };
}

function recordOf(run: DetachedRun, rows: readonly ResultRow[]): RunRecord {
  const [command = 'scatter', ...args] = run.command;
  const batch = !args.includes('--no-batch');
  const summary = summarize(rows, { requests: new Map(), paths: new Map(), usage: new Map(), model: null }, run.wallMs, { pattern: command, batch });
  // Listed, or still going: the status file's counts, as the run bar shows its progress (a resumed run's status
  // counts only the prompts it sends again). Opened once it ended, the rows' own.
  const finished = run.live === 'finished';
  if (!rows.length || !finished) Object.assign(summary, { prompts: run.total, ok: run.ok, failed: run.failed, cancelled: run.cancelled, promptThroughput: run.wallMs ? run.ok / (run.wallMs / 1000) : 0 });
  return {
    id: historyId(run),
    startedAt: run.startedAt,
    pattern: PATTERNS[command] ?? 'scatter',
    label: `detached ${command} ${run.id}`,
    mode: batch ? 'batched' : 'individual',
    summary,
    file: run.results ?? '',
    cancelled: finished && run.cancelled > 0,
    error: run.live === 'died' ? 'its process is gone (killed, or its node rebooted): Resume in the Detached Runs view' : finished && run.exitCode !== 0 ? (run.errors.at(-1) ?? `exit ${run.exitCode}`) : null,
    detached: { state: run.live, ...(run.exitCode !== undefined ? { exitCode: run.exitCode } : {}), where: run.login ?? 'this machine', done: run.done },
  };
}

/**
 * A detached run's rows now, in input order: its results file (whole once it ended; the rows an
 * earlier run kept while a resumed one goes) and, while it goes, its `.partial`, whose rows land in
 * the order they finish — a row there replaces the kept row of the same prompt.
 */
export async function detachedRows(run: DetachedRun, remote: RemoteRuns | undefined): Promise<ResultRow[]> {
  if (!run.results) return [];
  const texts = run.login ? await remoteTexts(run, remote) : await localTexts(run);
  const byIndex = new Map<number, ResultRow>();
  for (const text of texts) {
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        const row = JSON.parse(line) as ResultRow;
        if (typeof row.index === 'number') byIndex.set(row.index, { ...row, prompt: typeof row.prompt === 'string' ? row.prompt : '' });
      } catch {
        // a row half-written as it is read: whole at the next look
      }
    }
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

async function localTexts(run: DetachedRun): Promise<string[]> {
  const results = isAbsolute(run.results!) ? run.results! : join(run.folder, run.results!);
  const read = (path: string) => readFile(path, 'utf8').catch(() => '');
  return run.live === 'finished' ? [await read(results)] : [await read(results), await read(`${results}.partial`)];
}

async function remoteTexts(run: DetachedRun, remote: RemoteRuns | undefined): Promise<string[]> {
  if (!remote || remote.label !== run.login) throw new Error(`run ${run.id} lives on ${run.login}: connect through that login again to see its rows`);
  const results = posix.isAbsolute(run.results!) ? run.results! : posix.join(run.folder, run.results!);
  return [await remote.read(results, run.live !== 'finished')];
}

import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as vscode from 'vscode';
import type { Arm } from '../../core/run/compare.ts';
import type { ArmShown, ComparisonView, HistoryEntry, ReduceView, ResultRow, RunRecord, RunRequest } from '../../panel/protocol.ts';
import { settings } from '../settings.ts';

/** A saved run: its record, how to run it again, and what the panel shows besides its rows. */
export interface SavedRun {
  record: RunRecord;
  /** How to run it again; prompts and items are not repeated here: they are in the results file. */
  request: RunRequest;
  reduce?: ReduceView;
  comparison?: ComparisonView;
  /** A comparison: the individual arm's kept round's results (the batched arm's are `record.file`; see ComparisonView.kept). */
  individualFile?: string;
}

/** Which arm's rows a saved comparison shows when `arm` is asked for, and from which round (round 0 in records from before rounds were chosen). */
export function armShown(saved: SavedRun, arm: Arm): ArmShown {
  const which = arm === 'individual' && saved.individualFile ? 'individual' : 'batched';
  return { arm: which, round: saved.comparison?.kept?.[which] ?? 0 };
}

/** `<id>.run.json`: the record (its summary holds every endpoint's figures) and how to run it again. */
const RECORD = '.run.json';
/** `<id>.details.json`: a tree-reduce's levels, a comparison's rounds (latencies and timelines can be large). */
const DETAILS = '.details.json';
/** The history list stops at this many runs (the newest). */
const LIST_LIMIT = 500;

/**
 * Every run saved under the runs folder (`swarmLab.runsFolder` in the first workspace folder, or the
 * extension's storage without one): the results JSONL (one ResultRow a line, in input order), a
 * small JSON record beside it, and the details of a tree-reduce or comparison. Ids are the file
 * stems, which start with the time the run started.
 */
export class RunHistory {
  /**
   * The history list of one runs folder, kept as it changes here: each record is read once (or not
   * at all: a run saved here goes in as it is saved), never again at every run's end. A record
   * another window saves is read when its file is first seen; one it renames keeps its old label
   * here until the next reload.
   */
  private index: { folder: string; entries: Map<string, Promise<HistoryEntry | undefined>> } | undefined;
  /** Records being written, by id: whatever reads one waits for it (a finished run is asked for before its record is on disk). */
  private readonly saving = new Map<string, Promise<void>>();

  /** `others`: entries listed beside the saved runs (detached runs, from their status files), newest first by start. */
  constructor(
    private readonly storage: vscode.Uri,
    private readonly others: () => HistoryEntry[] = () => [],
  ) {}

  folder(): string {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri ?? this.storage;
    return vscode.Uri.joinPath(root, settings().runsFolder).fsPath;
  }

  /** Writes a run's record (and details); reads of it wait until it is written. */
  save(saved: SavedRun): Promise<void> {
    const folder = this.folder();
    const id = saved.record.id;
    const done = this.write(folder, saved).then(() => void this.entries(folder).set(id, Promise.resolve(entryOf(saved.record))));
    const pending: Promise<void> = done.then(
      () => {},
      () => {},
    ).then(() => void (this.saving.get(id) === pending && this.saving.delete(id)));
    this.saving.set(id, pending);
    return done;
  }

  private async write(folder: string, saved: SavedRun): Promise<void> {
    const { reduce, comparison, ...small } = saved;
    await mkdir(folder, { recursive: true });
    if (reduce || comparison) await writeFile(join(folder, `${saved.record.id}${DETAILS}`), JSON.stringify({ reduce, comparison }));
    const { prompts, items, ...rest } = small.request;
    const request: RunRequest = { ...rest, prompts: [], ...(items?.length ? { items: [] } : {}) }; // both come back from the results
    await writeFile(join(folder, `${saved.record.id}${RECORD}`), `${JSON.stringify({ ...small, request }, null, 1)}\n`);
  }

  /** The history list, newest first: one listing of the folder, and only the records not seen before read. Records that cannot be read are skipped. */
  async list(): Promise<HistoryEntry[]> {
    await Promise.all(this.saving.values());
    const folder = this.folder();
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      names = [];
    }
    const ids = names.filter((n) => n.endsWith(RECORD)).map((n) => n.slice(0, -RECORD.length)).sort().reverse().slice(0, LIST_LIMIT);
    const known = this.entries(folder);
    for (const id of ids) if (!known.has(id)) known.set(id, this.loadRecord(id).then((s) => entryOf(s.record), () => undefined));
    const listed = new Set(ids);
    for (const id of known.keys()) if (!listed.has(id)) known.delete(id); // deleted, or past the list's end
    const entries = await Promise.all(ids.map((id) => known.get(id)!));
    ids.forEach((id, i) => entries[i] === undefined && known.delete(id)); // tried again next time
    const saved = entries.filter((e): e is HistoryEntry => Boolean(e));
    const others = this.others();
    return others.length ? [...others, ...saved].sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, LIST_LIMIT) : saved;
  }

  /** The index of `folder` (a new one when the runs folder changed: another workspace or setting). */
  private entries(folder: string): Map<string, Promise<HistoryEntry | undefined>> {
    if (this.index?.folder !== folder) this.index = { folder, entries: new Map() };
    return this.index.entries;
  }

  /** Gives a saved run another name (its label in History, exports and comparisons). */
  async rename(id: string, label: string): Promise<void> {
    const saved = await this.loadRecord(id);
    saved.record.label = label;
    await writeFile(join(this.folder(), `${id}${RECORD}`), `${JSON.stringify(saved, null, 1)}\n`);
    this.entries(this.folder()).set(id, Promise.resolve(entryOf(saved.record)));
  }

  /** Deletes a saved run: its record, details and results files. */
  async delete(id: string): Promise<void> {
    const saved = await this.loadRecord(id);
    const files = [`${id}${RECORD}`, `${id}${DETAILS}`, saved.record.file, ...(saved.individualFile ? [saved.individualFile] : [])];
    await Promise.all(files.map((f) => rm(this.pathOf(f), { force: true })));
    this.entries(this.folder()).delete(id);
  }

  /** The record with its details. */
  async load(id: string): Promise<SavedRun> {
    const saved = await this.loadRecord(id);
    try {
      const details = JSON.parse(await readFile(join(this.folder(), `${id}${DETAILS}`), 'utf8')) as Pick<SavedRun, 'reduce' | 'comparison'>;
      return { ...saved, ...(details.reduce ? { reduce: details.reduce } : {}), ...(details.comparison ? { comparison: details.comparison } : {}) };
    } catch {
      return saved;
    }
  }

  private async loadRecord(id: string): Promise<SavedRun> {
    await this.saving.get(id);
    try {
      return JSON.parse(await readFile(join(this.folder(), `${id}${RECORD}`), 'utf8')) as SavedRun;
    } catch (err) {
      throw new Error(`no saved run ${id} in ${vscode.workspace.asRelativePath(this.folder())} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }

  /** The absolute path of a file the record names (always inside the runs folder). */
  pathOf(file: string): string {
    if (/[\\/]/.test(file) || file.startsWith('.')) throw new Error(`not a results file name: ${file}`);
    return join(this.folder(), file);
  }

  /** A run's rows from its results file, in input order. */
  async rows(saved: SavedRun, file = saved.record.file): Promise<ResultRow[]> {
    const rows: ResultRow[] = [];
    const lines = createInterface({ input: createReadStream(this.pathOf(file), 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line.trim()) continue;
      const row = JSON.parse(line) as ResultRow;
      rows.push({ ...row, prompt: typeof row.prompt === 'string' ? row.prompt : '' });
    }
    return rows;
  }

  /** A run's results file as it is: JSONL in input order (the webview parses it); a comparison's arm's (see armShown). */
  jsonl(saved: SavedRun, arm: Arm = 'batched'): Promise<string> {
    const file = saved.comparison && armShown(saved, arm).arm === 'individual' ? saved.individualFile! : saved.record.file;
    return readFile(this.pathOf(file), 'utf8');
  }

  /** The request to run a saved run again, its prompts (scatter) or items (map, tree-reduce) read back from its results. */
  async rerunRequest(id: string): Promise<RunRequest> {
    const saved = await this.loadRecord(id);
    const request = { ...saved.request };
    const needsPrompts = request.pattern === 'scatter';
    const needsItems = Array.isArray(request.items);
    if (needsPrompts || needsItems) {
      const leaves = (await this.rows(saved)).filter((r) => !r.level);
      if (needsPrompts) request.prompts = leaves.map((r) => ({ prompt: r.prompt, ...(Object.keys(r.input ?? {}).length ? { input: r.input } : {}) }));
      if (needsItems) request.items = leaves.map((r) => String(r.input?.item ?? ''));
    }
    return request;
  }
}

/** A record as the history list holds it (see HistoryEntry). */
function entryOf(record: RunRecord): HistoryEntry {
  const { prompts, ok, failed, cancelled, wallMs, promptThroughput } = record.summary;
  return { ...record, summary: { prompts, ok, failed, cancelled, wallMs, promptThroughput } };
}

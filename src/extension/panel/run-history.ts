import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as vscode from 'vscode';
import type { ComparisonView, ReduceView, ResultRow, RunRecord, RunRequest } from '../../panel/protocol.ts';
import { settings } from '../settings.ts';

/** What `<id>.run.json` holds, next to the run's results `<id>.jsonl`. */
export interface SavedRun {
  record: RunRecord;
  /** How to run it again; a scatter's prompts are not repeated here: they are in the results file. */
  request: RunRequest;
  reduce?: ReduceView;
  comparison?: ComparisonView;
  /** A comparison: the individual arm's first-round results (the batched arm's are `record.file`). */
  individualFile?: string;
}

const RECORD = '.run.json';
/** The history list stops at this many runs (the newest). */
const LIST_LIMIT = 500;

/**
 * Every run saved under the runs folder (`swarmLab.runsFolder` in the first workspace folder, or the
 * extension's storage without one): the results JSONL, one ResultRow a line in input order, and a
 * small JSON record beside it. Ids are the file stems, which start with the time the run started.
 */
export class RunHistory {
  constructor(private readonly storage: vscode.Uri) {}

  folder(): string {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri ?? this.storage;
    return vscode.Uri.joinPath(root, settings().runsFolder).fsPath;
  }

  async save(saved: SavedRun): Promise<void> {
    await mkdir(this.folder(), { recursive: true });
    await writeFile(join(this.folder(), `${saved.record.id}${RECORD}`), `${JSON.stringify(saved, null, 1)}\n`);
  }

  /** Newest first. Records that cannot be read are skipped. */
  async list(): Promise<RunRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.folder());
    } catch {
      return [];
    }
    const ids = names.filter((n) => n.endsWith(RECORD)).map((n) => n.slice(0, -RECORD.length)).sort().reverse().slice(0, LIST_LIMIT);
    const records = await Promise.all(ids.map((id) => this.load(id).then((s) => s.record, () => undefined)));
    return records.filter((r): r is RunRecord => Boolean(r));
  }

  async load(id: string): Promise<SavedRun> {
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

  /** The request to run a saved run again: a scatter's (or comparison's) prompts come back from its results. */
  async rerunRequest(id: string): Promise<RunRequest> {
    const saved = await this.load(id);
    const request = { ...saved.request };
    if (request.pattern === 'scatter' && !request.prompts.length) {
      request.prompts = (await this.rows(saved)).filter((r) => r.level === undefined).map((r) => ({ prompt: r.prompt, ...(Object.keys(r.input ?? {}).length ? { input: r.input } : {}) }));
    }
    return request;
  }
}

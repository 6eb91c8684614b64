import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClientOverhead, RunSummary, ServerLoad } from '../../core/index.ts';
import { LIVE_READINGS } from '../../core/endpoints/server-metrics.ts';
import type { ExperimentRun, ExperimentView } from '../../panel/experiment-protocol.ts';

/** How often the folder is read for runs that finished while the experiment goes. */
const READ_EVERY_MS = 500;

/** A run's record as `swarm run` writes it (runs/NAME.json). */
interface RunRecordFile {
  point: { value?: number; arm: string; repetition: number };
  summary: RunSummary;
  client?: ClientOverhead;
  servers?: ServerLoad[];
}

/**
 * One experiment file run by the bundled CLI (`swarm run FILE --out FOLDER --quiet`), with the editor's
 * Node and no shell, in the environment `cliEnv` gives (the keys its endpoints need, nothing else): its records read as they appear, each change handed to
 * `onView`. The CLI owns the run (sweeps, repetitions, arms, what is saved); this only reports it.
 */
export class ExperimentRunner {
  private readonly child: ChildProcess;
  private readonly seen = new Map<string, ExperimentRun>();
  private timer: NodeJS.Timeout | undefined;
  /** The folder's read under way: one at a time (two at once each took the same new record as theirs, and a run was listed twice). */
  private reading: Promise<void> | undefined;
  private stderr = '';
  private stopAsked = false;
  view: ExperimentView;
  readonly done: Promise<ExperimentView>;

  constructor(cli: string, file: string, folder: string, env: NodeJS.ProcessEnv, private readonly onView: (view: ExperimentView) => void) {
    this.view = { file, folder, status: 'running', error: null, exitCode: null, runs: [], live: null, sweep: null };
    this.child = spawn(process.execPath, [cli, 'run', file, '--out', folder, '--quiet'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => (this.stderr = (this.stderr + d).slice(-8_192)));
    const exited = new Promise<number | null>((resolve) => {
      this.child.once('error', (err) => ((this.stderr += err.message), resolve(null)));
      this.child.once('exit', (code, signal) => resolve(code ?? (signal === 'SIGINT' ? 130 : null)));
    });
    this.timer = setInterval(() => void this.read(), READ_EVERY_MS);
    this.done = exited.then(async (code) => {
      clearInterval(this.timer);
      // A read under way may have listed the folder before the last record was written: one more after it.
      await this.reading;
      await this.read();
      const sweep = await this.readSweep();
      const status = this.stopAsked || code === 130 ? 'stopped' : code === 0 || code === 1 ? (sweep ? 'finished' : 'failed') : 'failed';
      const error = code === 0 ? null : (this.stderr.split('\n').find((l) => /^error|\.swarm\.ya?ml:|^--/.test(l)) ?? this.stderr.trim().split('\n').at(-1) ?? null);
      this.update({ status, live: null, exitCode: code, error: status === 'finished' && code === 0 ? null : error, sweep });
      return this.view;
    });
  }

  /** Ends the run as Ctrl-C would: the CLI keeps every run that finished. */
  stop(): void {
    if (this.view.status !== 'running') return;
    this.stopAsked = true;
    this.child.kill('SIGINT');
  }

  private update(change: Partial<ExperimentView>): void {
    this.view = { ...this.view, ...change };
    this.onView(this.view);
  }

  /** Reads the folder (readFolder), unless a read is under way: that one is the answer. */
  private read(): Promise<void> {
    this.reading ??= this.readFolder().finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** New records in runs/, in the order they were written, and the readings so far of the run under way. */
  private async readFolder(): Promise<void> {
    const dir = join(this.view.folder, 'runs');
    const all = await readdir(dir).catch(() => [] as string[]);
    await this.readLive(dir, all);
    const names = all.filter((n) => n.endsWith('.json') && !this.seen.has(n));
    if (!names.length) return;
    const found: Array<{ at: number; run: ExperimentRun; name: string }> = [];
    for (const name of names) {
      try {
        const [text, info] = await Promise.all([readFile(join(dir, name), 'utf8'), stat(join(dir, name))]);
        const rec = JSON.parse(text) as RunRecordFile;
        const s = rec.summary;
        found.push({
          at: info.mtimeMs,
          name,
          run: {
            name: name.replace(/\.json$/, ''),
            point: { value: rec.point.value ?? null, arm: rec.point.arm, repetition: rec.point.repetition + 1 },
            summary: { wallMs: s.wallMs, prompts: s.prompts, ok: s.ok, failed: s.failed, promptThroughput: s.promptThroughput, outputTokenThroughput: s.outputTokenThroughput, ttftMedianMs: s.ttft?.medianMs ?? null },
            client: rec.client ?? null,
            servers: rec.servers ?? [],
          },
        });
      } catch {
        // Being written still: read again next time.
      }
    }
    if (!found.length) return;
    for (const f of found.sort((a, b) => a.at - b.at)) this.seen.set(f.name, f.run);
    const done = new Set(found.map((f) => f.run.name));
    this.update({ runs: [...this.view.runs, ...found.map((f) => f.run)], live: this.view.live && done.has(this.view.live.name) ? null : this.view.live });
  }

  /** The run under way (a live readings file without its record yet): its whole lines so far, when they grew. */
  private async readLive(dir: string, names: readonly string[]): Promise<void> {
    const file = names.find((n) => n.endsWith(LIVE_READINGS) && !this.seen.has(`${n.slice(0, -LIVE_READINGS.length)}.json`));
    if (!file) return;
    const name = file.slice(0, -LIVE_READINGS.length);
    const text = await readFile(join(dir, file), 'utf8').catch(() => '');
    const lines = text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean);
    if (this.view.live?.name === name && this.view.live.servers.length === lines.length) return;
    try {
      this.update({ live: { name, servers: lines.map((l) => JSON.parse(l) as ServerLoad) } });
    } catch {
      // A line cut by a write under way: read again next time.
    }
  }

  private async readSweep(): Promise<ExperimentView['sweep']> {
    try {
      const j = JSON.parse(await readFile(join(this.view.folder, 'sweep.json'), 'utf8')) as { parameter: string; metric: string; rows: NonNullable<ExperimentView['sweep']>['rows']; plan?: { fittedOn: string | null; rows: NonNullable<ExperimentView['sweep']>['plan']['rows']; model: unknown } };
      const note = !j.plan?.fittedOn ? 'no streamed run to fit the planner on (params.stream: true, or a load pattern)' : j.plan.model ? null : 'the planner could not fit its first streamed run';
      return { parameter: j.parameter, metric: j.metric, rows: j.rows, plan: { fittedOn: j.plan?.fittedOn ?? null, rows: j.plan?.rows ?? [], note } };
    } catch {
      return null;
    }
  }
}

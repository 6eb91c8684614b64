import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { startSimCluster, type SimCluster } from '../../../src/sim/cluster.ts';
import type { SimOptions } from '../../../src/sim/options.ts';
import { writeHostfile } from '../../../src/core/hostfile/write.ts';
import type { RunSummary } from '../../../src/core/index.ts';
import type { SwarmLabApi } from '../../../src/extension/extension.ts';
import type { ScatterOutcome } from '../../../src/extension/commands/run.ts';
import type { HostMessage, OpenedRun, RunRequest } from '../../../src/panel/protocol.ts';
import { parseRows } from '../../../src/panel/result-rows.ts';
import { until } from '../until.ts';
import { savePromptSet } from '../../../src/extension/panel/prompt-requests.ts';
import { medianRound } from '../../../src/core/run/compare.ts';
import { initialState, reduce, type Action } from '../../../webview/view-state.ts';
import { freshState } from '../../../webview/state.ts';
import { buildRunRequest, defaultCompose } from '../../../webview/lib/compose.ts';
import { patience } from '../../helpers/patience.ts';

type Msg<T extends HostMessage['type']> = Extract<HostMessage, { type: T }>;

let api: SwarmLabApi;
const clusters: SimCluster[] = [];
let nextRequestId = 1000;

async function sim(count: number, options: Partial<SimOptions> = {}): Promise<SimCluster> {
  const cluster = await startSimCluster(count, { ttftMs: 0, tpotMs: 0, requestOverheadMs: 0, ...options });
  clusters.push(cluster);
  return cluster;
}

const root = () => vscode.workspace.workspaceFolders![0]!.uri;
const runsFolder = () => join(root().fsPath, '.swarm', 'runs');

async function connectTo(cluster: SimCluster | SimCluster[]): Promise<void> {
  const endpoints = (Array.isArray(cluster) ? cluster : [cluster]).flatMap((c) => c.endpoints);
  const uri = vscode.Uri.joinPath(root(), 'panel.hostfile');
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(writeHostfile(endpoints)));
  assert.equal(await vscode.commands.executeCommand('swarmLab.connect', uri), true);
}

/** A marker in the host's message log; `since(mark)` gives what was posted after it. */
function mark(): HostMessage | undefined {
  return api.panel.messages().at(-1);
}
function since(marker: HostMessage | undefined): HostMessage[] {
  const all = api.panel.messages();
  return marker ? all.slice(all.lastIndexOf(marker) + 1) : [...all];
}
const ofType = <T extends HostMessage['type']>(list: HostMessage[], type: T) => list.filter((m): m is Msg<T> => m.type === type);

/** Opens the panel and plays the webview's `ready` (the front end, when built, says it too). */
async function openReady(): Promise<void> {
  await vscode.commands.executeCommand('swarmLab.openPanel');
  await until(() => api.panel.state().visible, 'the panel to show');
  const m = mark();
  await api.panel.receive({ type: 'ready' });
  await until(() => ofType(since(m), 'init')[0], 'init');
}

async function request(method: string, params: unknown): Promise<Msg<'reply'>> {
  const requestId = nextRequestId++;
  await api.panel.receive({ type: 'request', requestId, method, params });
  const replies = ofType(api.panel.messages() as HostMessage[], 'reply').filter((r) => r.requestId === requestId);
  assert.equal(replies.length, 1, `exactly one reply to request ${requestId} (${method})`);
  return replies[0]!;
}

/** Whether `runId` was let go in `list` (the lifecycle's end): its runFinished, then a history list naming it (its record saved). */
function letGo(list: HostMessage[], runId: string): boolean {
  const finished = list.findIndex((x) => x.type === 'runFinished' && x.runId === runId);
  return finished >= 0 && list.slice(finished + 1).some((x) => x.type === 'history' && x.history.some((h) => h.id === runId));
}

/** Runs as the panel's Run button does: the request answers the run's id at once; resolves once the run is let go. */
async function runFromPanel(req: Partial<RunRequest>): Promise<HostMessage[]> {
  const m = mark();
  const reply = await request('run', { request: { prompts: [], tags: [], batch: true, pattern: 'scatter', ...req } });
  assert.equal(reply.ok, true, reply.error);
  const { runId } = reply.value as { runId: string };
  await until(() => letGo(since(m), runId), `${runId} let go`, 60_000);
  return since(m);
}

/** Reruns a saved run from the panel; resolves once the run is let go. */
async function rerunFromPanel(id: string): Promise<HostMessage[]> {
  const m = mark();
  const reply = await request('rerun', { id });
  assert.equal(reply.ok, true, reply.error);
  const { runId } = reply.value as { runId: string };
  await until(() => letGo(since(m), runId), `${runId} let go`, 60_000);
  return since(m);
}

function lines(file: string): Array<Record<string, any>> {
  return readFileSync(join(runsFolder(), file), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

describe('the Swarm Lab panel (extension side)', function () {
  this.timeout(patience(30_000));

  before(async () => {
    api = await vscode.extensions.getExtension<SwarmLabApi>('swarm-lab.swarm-lab')!.activate();
  });

  afterEach(async () => {
    await vscode.commands.executeCommand('swarmLab.disconnect');
    await Promise.all(clusters.splice(0).map((c) => c.close()));
  });

  it('"Swarm: Open Panel" opens one webview panel, and again only brings it forward', async () => {
    const pkg = vscode.extensions.getExtension('swarm-lab.swarm-lab')!.packageJSON as { contributes: { commands: Array<{ command: string; title: string }> }; activationEvents: string[] };
    assert.ok(pkg.contributes.commands.some((c) => c.command === 'swarmLab.openPanel' && c.title === 'Open Panel'));
    assert.ok(pkg.activationEvents.includes('onWebviewPanel:swarmLab.panel'));
    await vscode.commands.executeCommand('swarmLab.openPanel');
    await vscode.commands.executeCommand('swarmLab.openPanel');
    await until(() => api.panel.state().visible, 'the panel to show');
    const panelTabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith('swarmLab.panel'));
    const tabs = await until(() => panelTabs().length > 0 && panelTabs(), 'the panel tab');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(panelTabs().length, 1);
    assert.equal(tabs[0]!.label, 'Swarm Lab');
  });

  it('registers its webview serializer (a second one for the same view type is refused)', () => {
    assert.throws(() => vscode.window.registerWebviewPanelSerializer('swarmLab.panel', { deserializeWebviewPanel: async () => {} }), /already registered/);
  });

  it('posts init once the webview is ready, with the swarm, the defaults and the history; endpoints when the swarm changes', async () => {
    await openReady();
    const init = ofType([...api.panel.messages()], 'init').at(-1)!;
    assert.equal(init.state.connected, false);
    assert.deepEqual(init.state.defaults, { model: '', maxTokens: null, batching: true });
    assert.ok(Array.isArray(init.state.history));
    const m = mark();
    const cluster = await sim(2, { model: 'sim-panel' });
    await connectTo(cluster);
    // What the webview holds: the last list, with the statuses that moved since (endpointStatus) applied.
    const shown = () => {
      let list: Msg<'endpoints'> | undefined;
      for (const x of since(m)) {
        if (x.type === 'endpoints') list = x;
        if (x.type === 'endpointStatus' && list) {
          const moved = new Map(x.changes);
          list = { ...list, endpoints: list.endpoints.map((e) => ({ ...e, status: moved.get(e.id) ?? e.status })) };
        }
      }
      return list;
    };
    const update = await until(() => [shown()].find((e) => e?.connected && e.endpoints.every((x) => x.status === 'up')), 'healthy endpoints');
    assert.deepEqual(update.endpoints.map((e) => [e.id, e.model]), cluster.endpoints.map((e) => [`${e.host}:${e.port}`, 'sim-panel']));
    assert.ok(since(m).filter((x) => x.type === 'endpoints' || x.type === 'endpointStatus').length <= 4, 'endpoint updates are throttled');
    // A status that moves alone crosses alone: taking an endpoint out of runs sends its new status, not the list.
    const n = mark();
    await vscode.commands.executeCommand('swarmLab.toggleExclude', { view: { id: update.endpoints[0]!.id } });
    const moved = await until(() => ofType(since(n), 'endpointStatus')[0], 'the excluded status');
    assert.deepEqual(moved.changes, [[update.endpoints[0]!.id, 'excluded']]);
    assert.equal(ofType(since(n), 'endpoints').length, 0, 'no whole list for one status');
    await vscode.commands.executeCommand('swarmLab.toggleExclude', { view: { id: update.endpoints[0]!.id } });
  });

  it('follows a palette scatter live (throttled, every row exactly once) and shows it when done; saves it in the history', async () => {
    const cluster = await sim(3, { requestOverheadMs: 1 });
    await connectTo(cluster);
    await openReady();
    const prompts = Array.from({ length: 1500 }, (_, i) => `q${i}, "quoted"`);
    const m = mark();
    const outcome = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts, batch: false, open: false });
    const posted = since(m);
    const id = outcome.resultsUri.path.split('/').pop()!.replace(/\.jsonl$/, '');
    const started = ofType(posted, 'runStarted');
    assert.deepEqual(started.map((s) => [s.runId, s.kind, s.total, s.pattern]), [[id, 'single', 1500, 'scatter']]);
    assert.equal(started[0]!.prompts?.[7], prompts[7], 'pending rows can show their prompt');
    assert.deepEqual([started[0]!.context.endpoints, started[0]!.context.params.batch], [3, false]);
    assert.match(started[0]!.context.hostfile ?? '', /panel\.hostfile/);
    const progress = ofType(posted, 'runProgress').filter((p) => p.runId === id);
    const indices = progress.flatMap((p) => parseRows(p.resultsJsonl).map((r) => r.index)).sort((a, b) => a - b);
    assert.deepEqual(indices, prompts.map((_, i) => i), 'every row once');
    assert.deepEqual(started[0]!.prompts, prompts, 'every prompt listed at the start');
    assert.ok(progress.every((p) => parseRows(p.resultsJsonl).every((r) => r.prompt === '')), 'so live rows leave theirs out (the page has it)');
    const seconds = outcome.summary.wallMs / 1000;
    assert.ok(progress.length >= 2, `several progress messages (${progress.length})`);
    assert.ok(progress.length <= Math.ceil(seconds * 5) + 2, `${progress.length} progress messages in ${seconds.toFixed(2)} s: at most 5 a second`);
    const finished = ofType(posted, 'runFinished')[0]!;
    assert.equal(finished.runId, id);
    assert.equal(finished.record.summary.ok, 1500);
    assert.equal(finished.record.mode, 'individual');
    assert.equal(finished.record.context?.endpoints, 3, 'the record keeps what it ran on');
    assert.match(finished.record.context?.serverVersion ?? '', /^\d+\.\d+\.\d+$/, "the servers' GET /version is saved with it");
    assert.ok(posted.indexOf(finished) > posted.indexOf(progress.at(-1)!), 'runFinished comes after the last rows');
    const history = ofType(posted, 'history').at(-1)!;
    assert.ok(posted.indexOf(history) > posted.indexOf(finished), 'runFinished as soon as the figures are known; the history list once the record is saved');
    assert.equal(history.history[0]!.id, id, 'newest first');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(ofType(since(m), 'showRun').length, 0, 'a panel that heard the run end is not sent it again');

    // On disk: the results (each line with its prompt) and the record beside them.
    assert.ok(existsSync(join(runsFolder(), `${id}.jsonl`)) && existsSync(join(runsFolder(), `${id}.run.json`)));
    const saved = JSON.parse(readFileSync(join(runsFolder(), `${id}.run.json`), 'utf8'));
    assert.equal(saved.record.file, `${id}.jsonl`);
    assert.deepEqual(saved.request.prompts, [], 'prompts live in the results file only');
    const first = lines(`${id}.jsonl`)[0]!;
    assert.equal(first.prompt, prompts[0]);
    assert.equal(first.text, `completion: ${prompts[0]}`);
  });

  it('reopens, exports (JSONL, CSV) and diffs saved runs; reruns one', async () => {
    const cluster = await sim(2);
    await connectTo(cluster);
    await openReady();
    const a = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts: ['alpha', 'b,"c"\nd', 'gamma'], batch: true, open: false });
    const b = await vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts: ['alpha', 'beta', 'gamma', 'delta'], batch: true, open: false });
    const idOf = (o: ScatterOutcome) => o.resultsUri.path.split('/').pop()!.replace(/\.jsonl$/, '');
    const [ida, idb] = [idOf(a), idOf(b)];

    const reply = await request('openRun', { id: ida });
    assert.equal(reply.ok, true);
    const show = reply.value as OpenedRun;
    assert.equal(show.record.id, ida);
    const shownRows = show.resultsJsonl.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as { prompt: string });
    assert.deepEqual(shownRows.map((r) => r.prompt), ['alpha', 'b,"c"\nd', 'gamma'], 'the results file, as it is');

    const jsonl = await api.panel.exportRun(ida, 'jsonl', join(root().fsPath, 'export.jsonl'));
    assert.equal(readFileSync(jsonl, 'utf8'), readFileSync(a.resultsUri.fsPath, 'utf8'));
    const csv = readFileSync(await api.panel.exportRun(ida, 'csv', join(root().fsPath, 'export.csv')), 'utf8');
    const [header, row0, row1] = csv.split('\r\n');
    assert.match(header!, /^index,status,endpoint,prompt,response,error,e2el_ms,/);
    assert.match(row0!, /^0,ok,127\.0\.0\.1:\d+,alpha,completion: alpha,,/);
    assert.match(row1!, /^1,ok,127\.0\.0\.1:\d+,"b,""c""\nd","completion: b,""c""\nd",,/);

    const diff = await request('compareRuns', { a: ida, b: idb });
    assert.equal(diff.ok, true);
    const value = diff.value as { a: { id: string }; b: { id: string }; changed: Array<{ index: number; a: string; b: string }>; unanswered: number };
    assert.deepEqual([value.a.id, value.b.id], [ida, idb]);
    // Prompt 4 (index 3) is only in the second run: not answered in both, so counted apart, not as a change.
    assert.deepEqual(value.changed, [{ index: 1, a: 'completion: b,"c"\nd', b: 'completion: beta' }]);
    assert.equal(value.unanswered, 1);

    const history = ofType(await rerunFromPanel(idb), 'history').at(-1)!.history;
    const again = history[0]!;
    assert.notEqual(again.id, idb);
    assert.equal(again.label, history.find((h) => h.id === idb)!.label);
    assert.deepEqual(lines(again.file).map((l) => l.prompt), ['alpha', 'beta', 'gamma', 'delta']);

    // Renamed, then deleted: the record and every file of the run go.
    await api.panel.renameRun(ida, 'the first try');
    assert.equal(((await request('openRun', { id: ida })).value as OpenedRun).record.label, 'the first try');
    await api.panel.deleteRun(ida);
    assert.ok(!existsSync(join(runsFolder(), `${ida}.run.json`)) && !existsSync(a.resultsUri.fsPath), 'record and results deleted');
    assert.equal((await request('openRun', { id: ida })).ok, false);
  });

  it('answers every request exactly once, refusing malformed ones; ignores messages that are not messages', async () => {
    await openReady();
    const bad = await request('openRun', { id: '../../etc/passwd' });
    assert.deepEqual([bad.ok, bad.error], [false, 'not a run id']);
    const unknown = await request('rm -rf', {});
    assert.equal(unknown.ok, false);
    const missing = await request('openRun', { id: 'no-such-run' });
    assert.equal(missing.ok, false);
    assert.match(missing.error!, /no saved run no-such-run/);
    const m = mark();
    await api.panel.receive('ready');
    await api.panel.receive({ kind: 'run' });
    await api.panel.receive({ type: 'run', request: { pattern: 'scatter', prompts: [] } });
    assert.deepEqual(since(m), [], 'nothing answers a malformed message');
    const oops = await request('run', { request: { pattern: 'scatter', prompts: 'oops' } });
    assert.equal(oops.ok, false, 'a malformed run request is refused in its reply');
    const clash = await request('run', { request: { pattern: 'scatter', prompts: [{ prompt: 'x' }], extra: { model: 'other' } } });
    assert.deepEqual([clash.ok, /set by Swarm Lab itself/.test(clash.error ?? '')], [false, true], 'an extra field may not replace one Swarm Lab sets');
    const which = await request('continueRun', { id: 'run-1', only: 'everything' });
    assert.deepEqual([which.ok, which.error], [false, 'only must be "failed" or "remaining"']);
    const streamed = await request('run', { request: { pattern: 'scatter', prompts: [{ prompt: 'x' }], stream: 'yes' } });
    assert.deepEqual([streamed.ok, streamed.error], [false, 'stream must be true or false']);
  });

  it('saves a prompt set as *.prompts.jsonl, copies to the clipboard, opens text in an editor', async () => {
    await openReady();
    const path = await savePromptSet([{ prompt: 'first' }, { prompt: 'with "fields"', input: { id: 7, tag: 'x' } }], vscode.Uri.joinPath(root(), 'mine'));
    assert.equal(path, join(root().fsPath, 'mine.prompts.jsonl'));
    assert.deepEqual(readFileSync(path!, 'utf8').trim().split('\n').map((l) => JSON.parse(l)), [{ prompt: 'first' }, { id: 7, tag: 'x', prompt: 'with "fields"' }]);
    const copied = await request('copy', { text: 'copied <b>text</b>' });
    assert.deepEqual([copied.ok, copied.value], [true, null]);
    assert.equal(await vscode.env.clipboard.readText(), 'copied <b>text</b>');
    const opened = await request('openInEditor', { text: '{"a": 1}', language: 'json' });
    assert.equal(opened.ok, true);
    await until(() => vscode.window.activeTextEditor?.document.getText() === '{"a": 1}' && vscode.window.activeTextEditor, 'the editor');
    assert.equal(vscode.window.activeTextEditor!.document.languageId, 'json');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('runs map, broadcast and tree-reduce from the panel through the core patterns', async () => {
    const cluster = await sim(2);
    await connectTo(cluster);
    await openReady();
    const map = await runFromPanel({ pattern: 'map', template: 'say {item}', items: ['x', 'y', 'z'], batch: true });
    const mapDone = ofType(map, 'runFinished')[0]!;
    assert.equal(mapDone.record.summary.ok, 3);
    assert.equal(mapDone.record.summary.generationRequests, 2, 'batched: one request per endpoint');
    // Live rows leave out the prompts runStarted listed (the page has them): each is the one that row answers.
    const listed = ofType(map, 'runStarted')[0]!.prompts!;
    const mapRows = ofType(map, 'runProgress').flatMap((p) => parseRows(p.resultsJsonl));
    assert.deepEqual(listed, ['say x', 'say y', 'say z']);
    assert.deepEqual(mapRows.map((r) => r.prompt || listed[r.index]).sort(), ['say x', 'say y', 'say z']);

    const bc = await runFromPanel({ pattern: 'broadcast', prompt: 'hello all' });
    assert.equal(ofType(bc, 'runStarted')[0]!.total, 2, 'a broadcast knows its total at launch: one per endpoint');
    assert.equal(ofType(bc, 'runFinished')[0]!.record.summary.ok, 2);

    const tr = await runFromPanel({ pattern: 'tree-reduce', template: 'leaf {item}', items: ['1', '2', '3'], reducePrompt: 'merge {responses}', fanin: 2 });
    assert.equal(ofType(tr, 'runStarted')[0]!.total, 3 + 2 + 1, 'a tree-reduce knows its total at launch: leaves and reduce prompts');
    const trDone = ofType(tr, 'runFinished')[0]!;
    assert.deepEqual(trDone.reduce!.levels.map((l) => l.texts.length), [3, 2, 1]);
    const history = ofType(tr, 'history').at(-1)!.history;
    assert.deepEqual(history.slice(0, 3).map((h) => h.pattern), ['tree-reduce', 'broadcast', 'map']);

    // Records stay small: items come back from the results; a tree-reduce's levels sit in a details file.
    const [trRecord, , mapRecord] = history;
    assert.deepEqual(JSON.parse(readFileSync(join(runsFolder(), `${mapRecord!.id}.run.json`), 'utf8')).request.items, []);
    assert.ok(existsSync(join(runsFolder(), `${trRecord!.id}.details.json`)));
    // The panel's results file holds the core's rows, as `swarm reduce --out` writes them: each row the prompt that was sent.
    const trRows = lines(trRecord!.file);
    assert.deepEqual(trRows.filter((l) => !l.level).map((l) => l.prompt), ['leaf 1', 'leaf 2', 'leaf 3']);
    const merged = trRows.filter((l) => l.level);
    assert.equal(merged.length, 3);
    for (const row of merged) assert.match(row.prompt, /^merge \S/, `a reduce row carries its filled reduce prompt, not a label: ${row.prompt}`);
    assert.deepEqual(((await request('openRun', { id: trRecord!.id })).value as OpenedRun).reduce, trDone.reduce);
    for (const record of [mapRecord!, trRecord!]) {
      const again = ofType(await rerunFromPanel(record.id), 'history').at(-1)!.history[0]!;
      assert.notEqual(again.id, record.id);
      assert.deepEqual(lines(again.file).filter((l) => !l.level).map((l) => l.prompt), lines(record.file).filter((l) => !l.level).map((l) => l.prompt));
    }
  });

  it('runs a fair comparison from the panel: one run whose arms alternate (armStarted/armFinished), saved with its rounds', async () => {
    const cluster = await sim(2);
    await connectTo(cluster);
    await openReady();
    const prompts = ['p0', 'p1', 'p2', 'p3', 'p4'].map((prompt) => ({ prompt }));
    const posted = await runFromPanel({ pattern: 'scatter', prompts, compare: { rounds: 2, cacheSalt: true } });
    // The panel's own webview may say `ready` mid-run (it loads once opened): the run is then told again from its start.
    const once = <T>(list: T[]) => [...new Map(list.map((x) => [JSON.stringify(x), x])).values()];
    const started = once(ofType(posted, 'runStarted'));
    assert.deepEqual(started.map((s) => [s.kind, s.rounds, s.total]), [['comparison', 2, 5]]);
    const arms = once(ofType(posted, 'armStarted')).map((s) => `${s.arm}${s.round}`);
    assert.deepEqual(arms, ['batched0', 'individual0', 'individual1', 'batched1']);
    assert.deepEqual(once(ofType(posted, 'armFinished')).map((a) => [a.runId, `${a.arm}${a.round}`, a.figures?.summary.ok]), arms.map((a) => [started[0]!.runId, a, 5]));
    assert.ok(posted.filter((x) => !['history', 'endpoints', 'reply'].includes(x.type)).every((x) => (x as { runId?: string }).runId === started[0]!.runId), 'every message of the run names it');
    assert.equal(ofType(posted, 'runFinished').length, 1);
    const last = ofType(posted, 'runFinished')[0]!.comparison!;
    assert.equal(last.cacheSalt, true);
    // Round 0's batched arm also carries the one probe of the batch chat endpoint (counted with the generation requests).
    assert.deepEqual(last.rounds.map((r) => [r.arm, r.round, r.summary.generationRequests - (r.summary.requestsByPath['/v1/chat/completions/batch'] ?? 0), r.requests.length, r.latenciesMs.length]), [
      ['batched', 0, 2, 2, 5],
      ['individual', 0, 5, 5, 5],
      ['individual', 1, 5, 5, 5],
      ['batched', 1, 2, 2, 5],
    ]);
    assert.match(last.templatePaths.batched, /completions/);
    const record = ofType(posted, 'history').at(-1)!.history[0]!;
    assert.equal(record.mode, 'compare');
    assert.deepEqual(lines(record.file).map((l) => l.prompt), ['p0', 'p1', 'p2', 'p3', 'p4']);
    const reopened = (await request('openRun', { id: record.id })).value as OpenedRun;
    assert.equal(reopened.comparison!.rounds.length, 4);
    // The table the panel showed when the comparison ended is the one History reopens: the webview's
    // own reducer over the messages it was sent, against the same reducer over the reopened run.
    // (A runProgress as the page's inbox hands it on: its rows read.)
    const live = posted.filter((x) => x.type !== 'reply').reduce((s, x) => reduce(s, (x.type === 'runProgress' ? { ...x, results: parseRows(x.resultsJsonl) } : x) as Action), initialState(freshState()));
    const fromHistory = reduce(initialState(freshState()), { type: 'opened', run: reopened });
    assert.deepEqual(live.store.all(), fromHistory.store.all());
    assert.deepEqual([live.run?.arm, live.run?.round], [reopened.arm!.arm, reopened.arm!.round]);
    assert.deepEqual(live.run?.summary, fromHistory.run?.summary, 'the figures above the table are the same');
    // Those rows are the batched arm's median round: batched requests, that round's figures.
    const median = medianRound(reopened.comparison!.rounds, 'batched')!;
    assert.deepEqual(reopened.arm, { arm: 'batched', round: median.round });
    assert.deepEqual(reopened.comparison!.kept, { batched: median.round, individual: medianRound(reopened.comparison!.rounds, 'individual')!.round });
    assert.equal(new Set(live.store.all().map((r) => `${r.endpoint} ${r.timings.sentMs}`)).size, 2, 'one list per endpoint: batched rows');
    assert.deepEqual(ofType(posted, 'runFinished')[0]!.record.summary, median.summary);
    assert.deepEqual([record.summary.ok, record.summary.wallMs], [median.summary.ok, median.summary.wallMs], 'History lists the same figures');
    // The other arm: its kept round's rows, one request per prompt; no round files left behind.
    const other = (await request('openRun', { id: record.id, arm: 'individual' })).value as OpenedRun;
    assert.deepEqual(other.arm!.arm, 'individual');
    assert.equal(new Set(parseRows(other.resultsJsonl).map((r) => `${r.endpoint} ${r.timings.sentMs}`)).size, 5);
    assert.deepEqual(readdirSync(runsFolder()).filter((f) => f.startsWith(record.id)).sort(), [`${record.id}-individual.jsonl`, `${record.id}.details.json`, `${record.id}.jsonl`, `${record.id}.run.json`].sort());
  });

  it('Compare from the palette returns the median round of each arm and shows the comparison in the panel', async () => {
    const cluster = await sim(3);
    await connectTo(cluster);
    await openReady();
    const m = mark();
    const result = await vscode.commands.executeCommand<{ batched: RunSummary; individual: RunSummary }>('swarmLab.compare', { prompts: ['a', 'b', 'c', 'd', 'e', 'f', 'g'], rounds: 3 });
    // (Less the one probe of the batch chat endpoint the first batched round carries.)
    assert.equal(result.batched.generationRequests - (result.batched.requestsByPath['/v1/chat/completions/batch'] ?? 0), 3);
    assert.equal(result.individual.generationRequests, 7);
    assert.equal(result.batched.mode, 'batched');
    // The panel heard it as it would a run of its own: one runStarted, six arms, one runFinished.
    const posted = since(m);
    assert.equal(ofType(posted, 'runStarted').length, 1);
    assert.equal(ofType(posted, 'armFinished').length, 6);
    const show = ofType(posted, 'runFinished')[0]!;
    assert.equal(show.record.mode, 'compare');
    assert.equal(show.comparison!.rounds.length, 6);
  });

  it('Tree Reduce from the palette shows the reduction in the panel', async () => {
    const cluster = await sim(2);
    await connectTo(cluster);
    await openReady();
    const m = mark();
    const outcome = await vscode.commands.executeCommand<{ text: string; levels: unknown[] }>('swarmLab.treeReduce', { prompt: 'leaf {item}', items: ['1', '2', '3', '4'], reducePrompt: 'merge: {responses}', fanin: 2 });
    assert.equal(outcome.levels.length, 3);
    const posted = since(m);
    const show = ofType(posted, 'runFinished')[0]!;
    assert.equal(show.record.pattern, 'tree-reduce');
    assert.equal(show.reduce!.text, outcome.text);
    const listed = ofType(posted, 'runStarted')[0]!.prompts ?? [];
    const rows = ofType(posted, 'runProgress').flatMap((p) => parseRows(p.resultsJsonl));
    assert.deepEqual(rows.filter((r) => !r.level).sort((a, b) => a.index - b.index).map((r) => r.prompt || listed[r.index]), ['leaf 1', 'leaf 2', 'leaf 3', 'leaf 4']);
  });

  it('cancel from the panel stops the run and keeps what finished', async () => {
    // The fast endpoint answers its own two prompts and hangs after: the hedges a loaded machine lets
    // start (a second after the stuck requests went) find nothing to answer them before the cancel.
    const fast = await sim(1, { hang: true, faultAfter: 2 });
    const stuck = await sim(1, { hang: true });
    await connectTo([fast, stuck]);
    await openReady();
    const m = mark();
    const reply = await request('run', { request: { pattern: 'scatter', prompts: ['a', 'b', 'c', 'd'].map((prompt) => ({ prompt })), tags: [], batch: false } });
    assert.equal(reply.ok, true);
    await until(() => ofType(since(m), 'runProgress').some((p) => p.done >= 2), 'the fast half');
    await api.panel.receive({ type: 'cancel' });
    const finished = await until(() => ofType(since(m), 'runFinished')[0], 'runFinished');
    // The saved record says how the run ended, for when it is reopened.
    assert.deepEqual([finished.record.cancelled, finished.record.error], [true, null]);
    assert.deepEqual([finished.record.summary.ok, finished.record.summary.cancelled], [2, 2]);
  });

  it('a streamed batched run from the panel: TTFT, TPOT and ITL in its record, each prompt\'s tokens counted', async () => {
    await connectTo(await sim(2, { ttftMs: 5, tpotMs: 1 }));
    await openReady();
    const said = await runFromPanel({ prompts: ['one', 'two', 'three', 'four'].map((prompt) => ({ prompt })), batch: true, stream: true });
    const done = ofType(said, 'runFinished')[0]!;
    const s = done.record.summary;
    assert.deepEqual([s.streamed, s.mode, s.ok, done.record.context?.params.stream], [true, 'batched', 4, true]);
    assert.ok(s.ttft && s.tpot && s.itl, 'TTFT, TPOT and ITL measured');
    const rows = lines(done.record.file);
    assert.ok(rows.every((r) => typeof r.completionTokens === 'number' && r.completionTokens > 0 && r.timings.firstTokenMs !== null), 'per-prompt tokens and first tokens, batched');
  });

  it('a batched run as Compose makes it by default streams: progress moves prompt by prompt and a cancel at ~70 % keeps every finished answer; unstreamed, the clock still moves and the servers\' /metrics say what runs', async function () {
    this.timeout(patience(90_000));
    await connectTo(await sim(2, { ttftMs: 20, tpotMs: 40, answerTokens: 40, reply: 'lorem' }));
    await openReady();
    const prompts = Array.from({ length: 60 }, (_, i) => ({ prompt: `prompt ${i}` }));
    const request = buildRunRequest({ ...defaultCompose(), prompts, maxTokens: '400' });
    assert.deepEqual([request.batch, request.stream], [true, true], 'Compose batches and streams by default');
    let m = mark();
    const reply = await api.panel.receive({ type: 'request', requestId: nextRequestId++, method: 'run', params: { request } }).then(() => ofType(since(m), 'reply')[0]!);
    assert.equal(reply.ok, true, reply.error);
    const progress = () => ofType(since(m), 'runProgress');
    // Answers come in while the batches are still generating: several progress steps below the total.
    await until(() => new Set(progress().map((p) => p.done).filter((d) => d > 0 && d < 60)).size >= 2 && progress().at(-1)!.done >= 42, 'progress at ~70 %', 30_000);
    const seen = progress().at(-1)!.done;
    await api.panel.receive({ type: 'cancel' });
    const finished = await until(() => ofType(since(m), 'runFinished')[0], 'runFinished');
    assert.equal(finished.record.cancelled, true);
    assert.ok(finished.record.summary.ok >= seen, `every answer finished before the cancel is kept (${finished.record.summary.ok} ≥ ${seen})`);
    assert.equal(lines(finished.record.file).filter((r) => r.status === 'ok').length, finished.record.summary.ok);

    // Unstreamed, no prompt is done until its batch ends: the clock moves all the same.
    m = mark();
    await api.panel.receive({ type: 'request', requestId: nextRequestId++, method: 'run', params: { request: { ...request, stream: false, maxTokens: 100, extra: { ignore_eos: true } } } });
    const ticks = await until(() => {
      const quiet = progress().filter((p) => p.done === 0);
      return quiet.length >= 2 && quiet.at(-1)!.elapsedMs > quiet[0]!.elapsedMs && quiet;
    }, 'the clock to move with no prompt done', 30_000);
    assert.ok(ticks.at(-1)!.elapsedMs >= 900, 'a heartbeat about once a second');
    // …and the servers' /metrics say what they are doing meanwhile: the 60 sequences on the run's 2 endpoints.
    const busy = await until(() => progress().find((p) => p.done === 0 && p.servers && p.servers.running + p.servers.waiting === 60), 'the servers\' sequences in a progress message', 30_000);
    assert.deepEqual([busy.servers!.asked, busy.servers!.answered], [2, 2]);
    await until(() => ofType(since(m), 'runFinished')[0], 'runFinished', 60_000);
  });

  it('"Run remaining" of a cancelled run sends only its cancelled prompts, merged into a copy of its results in input order', async () => {
    const fast = await sim(1);
    const stuck = await sim(1, { hang: true });
    await connectTo([fast, stuck]);
    await openReady();
    let m = mark();
    const reply = await request('run', { request: { pattern: 'scatter', prompts: ['a', 'b', 'c', 'd'].map((prompt) => ({ prompt })), tags: [], batch: false } });
    assert.equal(reply.ok, true);
    await until(() => ofType(since(m), 'runProgress').some((p) => p.done === 2), 'the fast half');
    await api.panel.receive({ type: 'cancel' });
    const first = (await until(() => ofType(since(m), 'runFinished')[0], 'runFinished')).record;
    const before = readFileSync(join(runsFolder(), first.file), 'utf8');
    assert.equal((await request('continueRun', { id: first.id, only: 'failed' })).error, `"${first.label}" has no failed prompts`);
    // The stuck endpoint goes away: its prompts fail over to the one that answers.
    await stuck.close();
    clusters.splice(clusters.indexOf(stuck), 1);
    m = mark();
    const again = await request('continueRun', { id: first.id, only: 'remaining' });
    assert.equal(again.ok, true, again.error);
    const { runId } = again.value as { runId: string };
    const done = await until(() => ofType(since(m), 'runFinished').find((f) => f.runId === runId), 'the continued run', 30_000);
    const startedMsg = ofType(since(m), 'runStarted')[0]!;
    assert.deepEqual([startedMsg.total, startedMsg.prompts], [4, ['a', 'b', 'c', 'd']], 'the panel shows the whole run');
    const shown = ofType(since(m), 'runProgress').flatMap((p) => parseRows(p.resultsJsonl).map((r) => r.index)).sort();
    assert.deepEqual(shown, [0, 1, 2, 3], 'kept and new rows, each once');
    const rows = lines(done.record.file);
    assert.deepEqual(rows.map((r) => [r.index, r.prompt, r.status]), [[0, 'a', 'ok'], [1, 'b', 'ok'], [2, 'c', 'ok'], [3, 'd', 'ok']]);
    assert.deepEqual([done.record.summary.prompts, done.record.summary.ok, done.record.summary.cancelled], [4, 4, 0], 'the record counts its whole results file');
    assert.match(done.record.label, /2 remaining$/);
    assert.equal(readFileSync(join(runsFolder(), first.file), 'utf8'), before, 'the cancelled run keeps its own results');
  });

  it('a comparison cancelled in its first arm still ends: armFinished (cancelled), then runFinished with its saved record', async () => {
    const fast = await sim(1);
    const stuck = await sim(1, { hang: true });
    await connectTo([fast, stuck]);
    await openReady();
    const m = mark();
    const reply = await request('run', { request: { pattern: 'scatter', prompts: ['a', 'b', 'c', 'd'].map((prompt) => ({ prompt })), tags: [], batch: true, compare: { rounds: 2, cacheSalt: true } } });
    assert.equal(reply.ok, true);
    await until(() => ofType(since(m), 'armStarted')[0], 'the first arm');
    await api.panel.receive({ type: 'cancel' });
    const finished = await until(() => ofType(since(m), 'runFinished')[0], 'runFinished');
    const arms = ofType(since(m), 'armFinished');
    assert.deepEqual(arms.map((a) => [a.arm, a.round, a.cancelled, a.figures]), [['batched', 0, true, null]]);
    assert.deepEqual([finished.record.mode, finished.record.cancelled], ['compare', true]);
    await until(() => letGo(since(m), finished.runId), 'the history list naming it');
    assert.ok(existsSync(join(runsFolder(), `${finished.runId}.run.json`)), 'saved');
  });

  it('a run is active until its record is saved: a Run while its rows come is refused; one sent the moment runFinished comes waits for the save, then starts; the finished run can be opened at once', async () => {
    await connectTo(await sim(2, { tpotMs: 2, answerTokens: 20 }));
    await openReady();
    const scatter = (n: number) => ({ request: { pattern: 'scatter', prompts: Array.from({ length: n }, (_, i) => ({ prompt: `q${i}` })), tags: [], batch: false } });
    const m = mark();
    const first = await request('run', scatter(40));
    assert.equal(first.ok, true, first.error);
    const { runId } = first.value as { runId: string };
    const refused = await request('run', scatter(1));
    assert.deepEqual([refused.ok, refused.error], [false, 'a run is going; cancel it or wait for it to finish']);
    // Polled every turn of the event loop: the save (a few file writes) takes several turns.
    while (!ofType(since(m), 'runFinished').some((f) => f.runId === runId)) await new Promise((r) => setImmediate(r));
    assert.equal(letGo(since(m), runId), false, 'caught while its record is being saved');
    const [opened, next] = await Promise.all([request('openRun', { id: runId }), request('run', scatter(3))]);
    assert.equal(opened.ok, true, opened.error);
    assert.equal((opened.value as OpenedRun).record.summary.ok, 40);
    assert.equal(next.ok, true, next.error);
    const nextId = (next.value as { runId: string }).runId;
    await until(() => letGo(since(m), nextId), 'the second run let go');
    const said = since(m);
    const firstListed = said.findIndex((x) => x.type === 'history' && x.history.some((h) => h.id === runId));
    const nextStarted = said.findIndex((x) => x.type === 'runStarted' && x.runId === nextId);
    assert.ok(firstListed >= 0 && firstListed < nextStarted, 'the first run was let go (saved, listed) before the second started');
    assert.deepEqual(ofType(said, 'runFinished').map((f) => [f.runId, f.record.summary.ok]), [[runId, 40], [nextId, 3]]);
    // The list carries what History shows, not every endpoint's figures; the record in full comes with openRun.
    const entry = ofType(said, 'history').at(-1)!.history.find((h) => h.id === runId)!;
    assert.deepEqual(Object.keys(entry.summary).sort(), ['cancelled', 'failed', 'ok', 'promptThroughput', 'prompts', 'wallMs']);
    assert.equal((opened.value as OpenedRun).record.summary.endpoints.length, 2);
  });

  it('a run it cannot start is refused in the reply, and no run starts', async () => {
    await openReady();
    const m = mark();
    const reply = await request('run', { request: { pattern: 'scatter', prompts: [{ prompt: 'x' }], tags: [], batch: true } });
    assert.equal(reply.ok, false);
    assert.match(reply.error!, /connect a hostfile/);
    assert.deepEqual(ofType(since(m), 'runStarted'), []);
  });

  it('holds everything while the webview is not ready, and replays a live run from its start when it is', async () => {
    const cluster = await sim(2, { requestOverheadMs: 3 });
    await connectTo(cluster);
    await openReady();
    // Another editor in front: the page is torn down (no retainContextWhenHidden) and hears nothing.
    const doc = await vscode.workspace.openTextDocument({ content: 'in front' });
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Active });
    await until(() => !api.panel.state().visible && !api.panel.state().ready, 'the panel to hide');
    const m = mark();
    const prompts = Array.from({ length: 600 }, (_, i) => `h${i}`);
    const pending = vscode.commands.executeCommand<ScatterOutcome>('swarmLab.scatter', { prompts, batch: false, open: false });
    await until(() => api.snapshot().running && /\$\(sync~spin\) Swarm \d[\d,]*\/600 /.test(api.snapshot().statusBar.text), 'the run to start, its total known');
    assert.deepEqual(since(m), [], 'nothing is posted to a hidden panel');
    await vscode.commands.executeCommand('swarmLab.openPanel');
    await api.panel.receive({ type: 'ready' });
    const outcome = await pending;
    const posted = since(m);
    assert.equal(posted[0]!.type, 'init');
    const id = outcome.resultsUri.path.split('/').pop()!.replace(/\.jsonl$/, '');
    assert.equal(ofType(posted, 'runStarted').find((s) => s.runId === id)?.total, 600, 'the live run from its start');
    const rows = ofType(posted, 'runProgress').filter((p) => p.runId === id).flatMap((p) => parseRows(p.resultsJsonl).map((r) => r.index));
    assert.deepEqual(rows.sort((a, b) => a - b), prompts.map((_, i) => i), 'every row once, the early ones included');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });
});

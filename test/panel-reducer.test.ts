/**
 * The panel's reducer under node: host message sequences (and the panel's own actions) in, view
 * state out. The run on show is always the one the host last said started, whatever else arrives.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ArmRound, ComparisonView, HostMessage, OpenedRun, ResultRow, RunContext, RunRecord } from '../src/panel/protocol.ts';
import type { RunSummary } from '../src/core/index.ts';
import { freshState } from '../webview/state.ts';
import { initialState, reduce, reopenId, type Action, type ViewState } from '../webview/view-state.ts';
import { armLosses, verdict } from '../webview/lib/stats.ts';
import { buildRunRequest, defaultCompose, summarize } from '../webview/lib/compose.ts';

const CONTEXT: RunContext = { hostfile: 'six.hostfile', endpoints: 6, model: 'llama', params: { batch: true, tags: [] } };

function summary(over: Partial<RunSummary> = {}): RunSummary {
  return {
    pattern: 'scatter',
    mode: 'batched',
    prompts: 4,
    ok: 4,
    failed: 0,
    cancelled: 0,
    wallMs: 1000,
    httpRequests: 2,
    promptThroughput: 4,
    outputTokenThroughput: 40,
    promptTokens: 40,
    completionTokens: 40,
    e2el: null,
    endpoints: [],
    model: 'llama',
    ...over,
  } as RunSummary;
}

function row(index: number, over: Partial<ResultRow> = {}): ResultRow {
  return {
    index,
    status: 'ok',
    ok: true,
    text: `answer ${index}`,
    reasoning: null,
    error: null,
    endpoint: 'gpu01:8000',
    finishReason: 'stop',
    promptTokens: 10,
    completionTokens: 10,
    attempts: 1,
    timings: { queuedMs: 0, sentMs: 1, firstByteMs: 2, doneMs: 3 },
    input: {},
    prompt: `prompt ${index}`,
    ...over,
  } as ResultRow;
}

const jsonl = (rows: ResultRow[]) => rows.map((r) => JSON.stringify(r)).join('\n');

function record(id: string, over: Partial<RunRecord> = {}): RunRecord {
  return { id, startedAt: '2026-11-23T10:00:00.000Z', pattern: 'scatter', label: id, mode: 'batched', summary: summary(), file: `${id}.jsonl`, cancelled: false, error: null, context: CONTEXT, ...over };
}

const started = (runId: string, total: number, over: Partial<Extract<HostMessage, { type: 'runStarted' }>> = {}): Action => ({
  type: 'runStarted',
  runId,
  kind: 'single',
  pattern: 'scatter',
  label: runId,
  total,
  rounds: 1,
  startedAt: '2026-11-23T10:00:00.000Z',
  context: CONTEXT,
  ...over,
});
const progress = (runId: string, rows: ResultRow[], total: number): Action => ({ type: 'runProgress', runId, done: rows.length, ok: rows.filter((r) => r.ok).length, failed: rows.filter((r) => r.status === 'failed').length, total, elapsedMs: 10, results: rows });
const finished = (rec: RunRecord, extra: Partial<Extract<HostMessage, { type: 'runFinished' }>> = {}): Action => ({ type: 'runFinished', runId: rec.id, record: rec, ...extra });
const init = (history: RunRecord[] = []): Action => ({ type: 'init', state: { connected: true, source: 'six.hostfile', endpoints: [], defaults: { model: '', maxTokens: null, batching: true }, history } });

function run(actions: Action[], from: ViewState = initialState(freshState())): ViewState {
  return actions.reduce(reduce, from);
}

function armRound(arm: ArmRound['arm'], round: number, over: Partial<RunSummary> = {}): ArmRound {
  return { arm, round, summary: summary({ mode: arm, ...over }), requests: [], latenciesMs: [] };
}

describe('panel reducer', () => {
  test('endpoint statuses that moved apply to the list held, the rest of it as it was; the UI state is untouched', () => {
    const tags = { role: 'chat' };
    const list: Action = { type: 'endpoints', connected: true, source: 'six.hostfile', endpoints: ['a:1', 'b:1', 'c:1'].map((id) => ({ id, status: 'up', model: 'llama', tags })) };
    const before = run([init(), list]);
    const after = run([{ type: 'endpointStatus', changes: [['b:1', 'degraded'], ['gone:1', 'down']] }], before);
    assert.deepEqual(after.endpoints.map((e) => [e.id, e.status, e.model, e.tags]), [['a:1', 'up', 'llama', tags], ['b:1', 'degraded', 'llama', tags], ['c:1', 'up', 'llama', tags]]);
    assert.equal(after.endpoints[0], before.endpoints[0], 'an endpoint that did not move is the same object');
    assert.equal(after.ui, before.ui, 'nothing the panel saves changed (app.ts saves only when the UI or the run on show did)');
  });

  test('a palette run arriving while another run is on show replaces it: label, totals, rows, filters', () => {
    const big = Array.from({ length: 30 }, (_, i) => row(i));
    let s = run([init(), started('big', 3000, { label: 'big.prompts.txt · individual' }), progress('big', big, 3000), { type: 'filter', patch: { mode: 'failures', search: 'x' } }, { type: 'tab', tab: 'history' }]);
    assert.equal(s.run?.label, 'big.prompts.txt · individual');
    assert.equal(s.ui.filter.mode, 'failures');
    s = run([started('small', 30, { label: 'small · batched', prompts: Array.from({ length: 30 }, (_, i) => `small ${i}`) })], s);
    assert.equal(s.run?.id, 'small');
    assert.equal(s.run?.total, 30, 'the total is known at launch');
    assert.equal(s.run?.running, true);
    assert.equal(s.store.length, 30);
    assert.equal(s.store.received, 0, 'no row of the other run');
    assert.equal(s.store.prompts[7], 'small 7', 'pending rows know their prompt');
    assert.equal(s.ui.filter.mode, 'all', 'filters belong to a run');
    assert.equal(s.ui.filter.search, '');
    assert.equal(s.ui.tab, 'results');
    assert.equal(s.ui.compose.prompts.length, 30, 'an empty Compose takes the palette run\'s prompts');
    assert.equal(s.ui.compose.prompts[3]?.prompt, 'small 3');
    // Late messages of the old run change nothing.
    s = run([progress('big', [row(0, { text: 'WRONG RUN' })], 3000), finished(record('big'))], s);
    assert.equal(s.run?.id, 'small');
    assert.equal(s.store.received, 0);
    assert.ok(s.history.some((h) => h.id === 'big'), 'its record still reaches history');
    s = run([progress('small', [row(0), row(1)], 30), finished(record('small', { summary: summary({ prompts: 30, ok: 30 }) }))], s);
    assert.equal(s.run?.running, false);
    assert.equal(s.run?.saved, true);
    assert.equal(s.store.rows[0]?.text, 'answer 0');
  });

  test('a comparison is one run from runStarted to runFinished; its arms come with armStarted/armFinished; a cancel between arms ends it', () => {
    const setup = { cacheSalt: true, templatePaths: { batched: 'b', individual: 'i' } };
    let s = run([init(), started('cmp', 6, { kind: 'comparison', rounds: 2, comparison: setup })]);
    assert.equal(s.comparison?.runId, 'cmp');
    assert.equal(s.comparison?.view.rounds.length, 0);
    s = run([{ type: 'armStarted', runId: 'cmp', arm: 'batched', round: 0 }, progress('cmp', [row(0), row(1)], 6)], s);
    assert.equal(s.run?.arm, 'batched');
    assert.equal(s.store.received, 2);
    s = run([{ type: 'armFinished', runId: 'cmp', arm: 'batched', round: 0, figures: armRound('batched', 0), cancelled: false, error: null }], s);
    assert.equal(s.run?.running, true, 'between arms the comparison is still running');
    assert.equal(s.ui.tab, 'compare', 'the first figures bring the Comparison tab forward');
    s = run([{ type: 'tab', tab: 'results' }, { type: 'armStarted', runId: 'cmp', arm: 'individual', round: 0 }], s);
    assert.equal(s.store.received, 0, 'each arm shows its own rows');
    assert.equal(s.store.length, 6);
    s = run([{ type: 'armFinished', runId: 'cmp', arm: 'individual', round: 0, figures: null, cancelled: true, error: null }], s);
    assert.equal(s.ui.tab, 'results', 'the tab comes forward once per run');
    assert.match(s.notice?.text ?? '', /cancelled/);
    assert.equal(s.run?.running, true, 'the run ends with runFinished, not with an arm');
    const rec = record('cmp', { mode: 'compare', cancelled: true });
    s = run([finished(rec, { comparison: { ...setup, rounds: [armRound('batched', 0)] } })], s);
    assert.equal(s.run?.running, false);
    assert.equal(s.run?.cancelled, true);
    assert.equal(s.comparison?.view.rounds.length, 1);
    // A new single run keeps the old comparison, labelled with the run it belongs to.
    s = run([started('next', 2)], s);
    assert.equal(s.comparison?.runId, 'cmp');
    assert.equal(s.comparison?.label, 'cmp');
  });

  test('a reload mid-run: the snapshot never shows as running; the host resyncs the live run; a finished one is reopened unless a live run took its place', () => {
    let s = run([init(), started('live', 4), progress('live', [row(0)], 4)]);
    // What App saves (state.ts's SavedRun), then a reload.
    const ui = { ...s.ui, saved: { view: s.run!, total: s.store.length, rows: s.store.all(), reduce: null, comparison: null } };
    s = initialState(ui);
    assert.equal(s.run?.running, false);
    assert.equal(s.stale, true, 'a snapshot taken mid-run is not the whole run');
    // Still going: the host resyncs it from the start.
    const resynced = run([init(), started('live', 4), progress('live', [row(0), row(1)], 4)], s);
    assert.equal(reopenId(run([init()], s)), null, 'not in history: nothing to reopen');
    assert.equal(resynced.run?.running, true);
    assert.equal(resynced.store.received, 2);
    // Over by the time the panel came back: its record is in history; the panel asks for it.
    s = run([init([record('live')])], s);
    assert.equal(reopenId(s), 'live');
    const opened: OpenedRun = { record: record('live', { summary: summary({ ok: 4 }) }), resultsJsonl: jsonl([0, 1, 2, 3].map((i) => row(i))) };
    const reopened = run([{ type: 'opened', run: opened, ifShowing: 'live' }], s);
    assert.equal(reopened.store.received, 4);
    assert.equal(reopened.stale, false);
    // A run started before the reopen's answer came: the answer is dropped.
    const overtaken = run([started('newer', 2), { type: 'opened', run: opened, ifShowing: 'live' }], s);
    assert.equal(overtaken.run?.id, 'newer');
  });

  test('a detached run on show while it goes: running (not done) on its status file\'s progress; after a reload it is asked for again once History lists it', () => {
    const going = record('detached-r', { summary: summary({ prompts: 40, ok: 3 }), detached: { state: 'running', where: 'me@login', done: 3 } });
    let s = run([init(), { type: 'showRun', record: going, resultsJsonl: jsonl([row(0), row(1), row(2), row(3)]) }]);
    assert.deepEqual([s.run?.running, s.run?.detachedGoing, s.run?.done, s.run?.total], [false, true, 3, 40]);
    const ui = { ...s.ui, saved: { view: s.run!, total: s.store.length, rows: s.store.all(), reduce: null, comparison: null } };
    s = initialState(ui);
    assert.equal(s.stale, true, 'it moved while the panel was away');
    // A login-node run is listed only once the window connects through its login again.
    assert.equal(reopenId(run([init()], s)), null);
    s = run([init(), { type: 'history', history: [going] }], s);
    assert.equal(reopenId(s), 'detached-r');
    const ended = run([{ type: 'opened', run: { record: { ...going, detached: { state: 'finished', exitCode: 0, where: 'me@login', done: 40 } }, resultsJsonl: jsonl([row(0)]) }, ifShowing: 'detached-r' }], s);
    assert.deepEqual([ended.run?.detachedGoing, ended.stale], [undefined, false]);
  });

  test('showRun (a run the panel missed) and Open from History show that run, on its tab, with its filters reset', () => {
    const cmp: ComparisonView = { rounds: [armRound('batched', 0), armRound('individual', 0)], cacheSalt: true, templatePaths: { batched: 'b', individual: 'i' } };
    let s = run([init(), started('a', 2), { type: 'filter', patch: { endpoint: 'gpu01:8000' } }]);
    s = run([{ type: 'showRun', record: record('c', { mode: 'compare' }), resultsJsonl: jsonl([row(0)]), comparison: cmp }], s);
    assert.equal(s.run?.id, 'c');
    assert.equal(s.run?.kind, 'comparison');
    assert.equal(s.ui.tab, 'compare');
    assert.equal(s.ui.filter.endpoint, '');
    assert.equal(s.comparison?.runId, 'c');
    s = run([{ type: 'opened', run: { record: record('t', { pattern: 'tree-reduce' }), resultsJsonl: jsonl([row(0)]), reduce: { text: 'FINAL', levels: [] } } }], s);
    assert.equal(s.ui.tab, 'tree');
    assert.equal(s.reduce?.text, 'FINAL');
  });

  test('a refused run says why; a failed run says failed', () => {
    let s = run([init(), { type: 'refused', error: 'the prompt set is empty' }]);
    assert.equal(s.notice?.kind, 'error');
    assert.match(s.notice!.text, /prompt set is empty/);
    s = run([started('e', 4), finished(record('e', { error: 'every endpoint is down', summary: summary({ ok: 1, failed: 3 }) }))], s);
    assert.equal(s.run?.error, 'every endpoint is down');
    assert.equal(s.notice?.kind, 'error');
  });
});

describe('honest comparisons', () => {
  const paths = { batched: 'b', individual: 'i' };
  test('the faster arm that lost prompts says so; equal medians name no winner', () => {
    const c: ComparisonView = {
      cacheSalt: true,
      templatePaths: paths,
      rounds: [0, 1].flatMap((r) => [armRound('batched', r, { wallMs: 500, prompts: 20, ok: 12, failed: 8 }), armRound('individual', r, { wallMs: 1000, prompts: 20, ok: 20 })]),
    };
    assert.deepEqual(armLosses(c, 'batched'), { rounds: 2, prompts: 40, failed: 16, cancelled: 0 });
    assert.match(verdict(c)!, /Batched finished 2\.00× faster .* but it lost prompts \(16 of 40 prompts failed\)/);
    const same: ComparisonView = { cacheSalt: true, templatePaths: paths, rounds: [armRound('batched', 0, { wallMs: 12_000 }), armRound('individual', 0, { wallMs: 12_050 })] };
    assert.match(verdict(same)!, /same wall time/);
  });
});

describe('compose: the other generation parameters', () => {
  test('system prompt, top_p, seed, stop, n and extra fields go into the RunRequest; bad ones are said', () => {
    const c = { ...defaultCompose(), prompts: [{ prompt: 'a' }], system: 'Be brief.', topP: '0.9', seed: '7', stopText: 'END\n\n###', n: '2', extraText: '{"reasoning_effort": "low"}' };
    const r = buildRunRequest(c);
    assert.deepEqual([r.system, r.topP, r.seed, r.stop, r.n, r.extra], ['Be brief.', 0.9, 7, ['END', '###'], 2, { reasoning_effort: 'low' }]);
    assert.equal(summarize(c, []).problem, null);
    assert.match(summarize({ ...c, extraText: '[1]' }, []).problem ?? '', /JSON object/);
    assert.match(summarize({ ...c, topP: '1.5' }, []).problem ?? '', /top_p/);
  });
});

/**
 * The panel's ported patterns (issue 12) in the real extension host: a RunRequest from the webview
 * runs broadcast with an aggregator, fan-out/fan-in, pipeline and blackboard on simulators, with a
 * routing choice, and the steps come back (and are saved) as a tree-reduce's levels are.
 */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { startSimCluster, type SimCluster } from '../../../src/sim/cluster.ts';
import { writeHostfile } from '../../../src/core/hostfile/write.ts';
import type { Endpoint } from '../../../src/core/index.ts';
import type { SwarmLabApi } from '../../../src/extension/extension.ts';
import type { HostMessage, OpenedRun, ResultRow, RunRequest } from '../../../src/panel/protocol.ts';
import { parseRows } from '../../../src/panel/result-rows.ts';
import { until } from '../until.ts';
import { patience } from '../../helpers/patience.ts';

type Msg<T extends HostMessage['type']> = Extract<HostMessage, { type: T }>;

let api: SwarmLabApi;
let cluster: SimCluster | undefined;
let nextRequestId = 5000;

const root = () => vscode.workspace.workspaceFolders![0]!.uri;
const ofType = <T extends HostMessage['type']>(list: readonly HostMessage[], type: T) => list.filter((m): m is Msg<T> => m.type === type);

/** Two simulated servers tagged for a blackboard (role=hypotheses, role=critiques), connected, the panel ready. */
async function connect(): Promise<void> {
  cluster = await startSimCluster(2, { ttftMs: 0, tpotMs: 0, requestOverheadMs: 0 });
  const endpoints: Endpoint[] = cluster.endpoints.map((e, i) => ({ ...e, tags: { role: i ? 'critiques' : 'hypotheses' } }));
  const uri = vscode.Uri.joinPath(root(), 'patterns.hostfile');
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(writeHostfile(endpoints)));
  assert.equal(await vscode.commands.executeCommand('swarmLab.connect', uri), true);
  await vscode.commands.executeCommand('swarmLab.openPanel');
  await until(() => api.panel.state().visible, 'the panel to show');
  const before = api.panel.messages().length;
  await api.panel.receive({ type: 'ready' });
  await until(() => ofType(api.panel.messages().slice(before), 'init')[0], 'init');
}

async function request(method: string, params: unknown): Promise<Msg<'reply'>> {
  const requestId = nextRequestId++;
  await api.panel.receive({ type: 'request', requestId, method, params });
  return until(() => ofType(api.panel.messages(), 'reply').find((r) => r.requestId === requestId), `the reply to ${method}`);
}

/** Runs as the Run button does; resolves with the run's messages once its runFinished is posted. */
async function run(req: Partial<RunRequest>): Promise<{ started: Msg<'runStarted'>; done: Msg<'runFinished'>; rows: ResultRow[] }> {
  const before = api.panel.messages().length;
  const reply = await request('run', { request: { prompts: [], tags: [], batch: false, ...req } });
  assert.equal(reply.ok, true, reply.error);
  const { runId } = reply.value as { runId: string };
  const mine = () => api.panel.messages().slice(before).filter((m) => 'runId' in m && m.runId === runId);
  const done = await until(() => ofType(mine(), 'runFinished')[0], `runFinished of ${runId}`, 60_000);
  return { started: ofType(mine(), 'runStarted')[0]!, done, rows: ofType(mine(), 'runProgress').flatMap((p) => parseRows(p.resultsJsonl)) };
}

describe('the panel runs the ported patterns (extension side)', function () {
  this.timeout(patience(60_000));

  before(async () => {
    api = await vscode.extensions.getExtension<SwarmLabApi>('swarm-lab.swarm-lab')!.activate();
    await connect();
  });

  after(async () => {
    await vscode.commands.executeCommand('swarmLab.disconnect');
    await cluster?.close();
  });

  it('a broadcast with a vote: its answers and the vote as one step; the routing choice is saved with the run', async () => {
    const { started, done } = await run({ pattern: 'broadcast', prompt: 'Yes', patterns: { aggregate: 'vote' }, route: 'least-requests', maxTokens: 20 });
    assert.equal(started.total, 2);
    assert.equal(started.context.params.route, 'least-requests');
    assert.equal(done.record.pattern, 'broadcast');
    const [step] = done.reduce!.levels;
    assert.deepEqual([step!.label, step!.texts.length, step!.aggregate?.name], ['Answers · vote', 2, 'vote']);
    assert.deepEqual(JSON.parse(done.reduce!.text), { winner: 'completion: Yes', confidence: 1, votes: 2, failed: 0, distribution: [{ answer: 'completion: Yes', votes: 2 }] });
    assert.deepEqual(((await request('openRun', { id: done.runId })).value as OpenedRun).reduce, done.reduce, 'saved, and reopened the same');
  });

  it('fan-out/fan-in and a pipeline: workers then collector; each stage with its answers, the voting stage with its vote; rows carry the prompt each step sent', async () => {
    const fan = await run({ pattern: 'fan-out-fan-in', prompt: 'idea', patterns: { collectPrompt: 'join {responses}', workers: 2 }, maxTokens: 200 });
    assert.deepEqual(fan.done.reduce!.levels.map((l) => [l.label, l.texts.length]), [['Workers', 2], ['Collector', 1]]);
    assert.equal(fan.done.reduce!.text, 'completion: join completion: idea\n---\ncompletion: idea');

    const stages = [
      { name: 'draft', template: 'Draft: {input}', agents: 2 },
      { name: 'pick', template: 'Pick: {input}', agents: 2, transform: 'vote' as const },
    ];
    const pipe = await run({ pattern: 'pipeline', patterns: { stages, input: 'a poem' }, route: 'prefix-aware', maxTokens: 200 });
    assert.equal(pipe.started.total, 4);
    assert.deepEqual(pipe.done.reduce!.levels.map((l) => [l.label, l.texts.length, l.aggregate?.name]), [['Stage 1 · draft (2 agents)', 2, undefined], ['Stage 2 · pick (2 agents)', 2, 'vote']]);
    assert.deepEqual(pipe.rows.map((r) => [r.level, r.prompt]).sort(), [[0, 'Draft: a poem'], [0, 'Draft: a poem'], [1, 'Pick: completion: Draft: a poem\ncompletion: Draft: a poem'], [1, 'Pick: completion: Draft: a poem\ncompletion: Draft: a poem']]);
  });

  it('a blackboard: rounds of entries by section until one matches; a bad request is refused before anything runs', async () => {
    const board = await run({ pattern: 'blackboard', patterns: { sections: ['hypotheses', 'critiques'], boardPrompt: 'As {section}: {board}', maxRounds: 3, until: 'As critiques' }, maxTokens: 400 });
    assert.deepEqual(board.done.reduce!.levels.map((l) => [l.label, l.texts.map((t) => t.slice(0, t.indexOf(']') + 1))]), [['Round 1', ['[hypotheses]', '[critiques]']]]);
    assert.match(board.done.reduce!.text, /^## hypotheses\n- completion: As hypotheses/);

    const refused = await request('run', { request: { pattern: 'blackboard', prompts: [], tags: [], batch: false, patterns: { sections: ['x'], boardPrompt: 'no board' } } });
    assert.deepEqual([refused.ok, refused.error], [false, 'the blackboard prompt must contain {board} (and may contain {section})']);
    const badRoute = await request('run', { request: { pattern: 'pipeline', prompts: [], tags: [], batch: false, route: 'fastest' } });
    assert.equal(badRoute.ok, false);
    assert.match(badRoute.error!, /route must be one of/);
  });
});

/** Host-side data for the panel harness: endpoints, run summaries, history records, a comparison. */
import type { ArmRound, ComparisonView, EndpointInfo, PanelState, ResultRow, RunContext, RunMessage, RunRecord } from '../../src/panel/protocol.ts';
import { rowsJsonl } from '../../src/panel/result-rows.ts';

type RunSummary = RunRecord['summary'];

export const ENDPOINTS: EndpointInfo[] = [
  { id: 'gpu01:8000', status: 'up', model: 'llama-3.1-8b', tags: { role: 'chat', rack: 'x1' } },
  { id: 'gpu02:8000', status: 'up', model: 'llama-3.1-8b', tags: { role: 'chat', rack: 'x2' } },
  { id: 'gpu03:8000', status: 'up', model: 'llama-3.1-8b', tags: { role: 'chat', rack: 'x2' } },
  { id: 'gpu04:8000', status: 'down', model: null, tags: { role: 'embed', rack: 'x1' } },
];

export function summary(over: Partial<RunSummary> = {}): RunSummary {
  return {
    pattern: 'scatter',
    mode: 'batched',
    streamed: false,
    model: 'llama-3.1-8b',
    wallMs: 2400,
    httpRequests: 3,
    generationRequests: 3,
    requestsByPath: { '/v1/completions': 3 },
    prompts: 120,
    ok: 118,
    failed: 2,
    cancelled: 0,
    requestThroughput: 1.25,
    promptThroughput: 49.2,
    promptTokens: 3000,
    completionTokens: 9000,
    uncounted: 0,
    outputTokenThroughput: 3750,
    e2el: { meanMs: 1800, medianMs: 1750, p90Ms: 2200, p99Ms: 2350 },
    ttft: null,
    tpot: null,
    itl: null,
    endpoints: [
      { endpoint: 'gpu01:8000', prompts: 40, ok: 40, failed: 0, requests: 1 },
      { endpoint: 'gpu02:8000', prompts: 40, ok: 39, failed: 1, requests: 1 },
      { endpoint: 'gpu03:8000', prompts: 40, ok: 39, failed: 1, requests: 1 },
    ],
    ...over,
  };
}

export function record(id: string, startedAt: string, over: Partial<RunRecord> = {}): RunRecord {
  return { id, startedAt, pattern: 'scatter', label: `scatter ${id}`, mode: 'batched', summary: summary(), file: `.swarm/runs/${id}.jsonl`, ...over };
}

export const HISTORY: RunRecord[] = [
  record('run-3', '2026-11-02T10:30:00.000Z', { label: 'questions.prompts.jsonl · 120 prompts', mode: 'individual', summary: summary({ mode: 'individual', wallMs: 5200, httpRequests: 120, promptThroughput: 22.7 }) }),
  record('run-2', '2026-11-02T10:20:00.000Z', { label: 'questions.prompts.jsonl · 120 prompts' }),
  record('run-1', '2026-11-01T09:00:00.000Z', { pattern: 'tree-reduce', label: 'tree-reduce of 8 items', mode: 'individual' }),
];

export const CONTEXT: RunContext = { hostfile: '/work/exp/aurora.hostfile', endpoints: 3, model: 'llama-3.1-8b', params: { batch: true, tags: [] } };

type Started = Extract<RunMessage, { type: 'runStarted' }>;
type Finished = Extract<RunMessage, { type: 'runFinished' }>;

/** Rows as OpenedRun carries them: JSONL. */
export const jsonl = rowsJsonl;

/** `runStarted` as the host sends it: a single scatter run unless `over` says otherwise. */
export function started(runId: string, total: number, label: string, over: Partial<Started> = {}): Started {
  return { type: 'runStarted', runId, kind: 'single', pattern: 'scatter', label, total, rounds: 1, startedAt: '2026-11-02T11:00:00.000Z', context: CONTEXT, ...over };
}

/** A comparison's `runStarted`. */
export function comparisonStarted(runId: string, total: number, label: string, rounds: number): Started {
  return started(runId, total, label, { kind: 'comparison', rounds, comparison: { cacheSalt: true, templatePaths: comparison(1).templatePaths } });
}

/** `runFinished` with the record the host saved. */
export function finished(runId: string, over: Partial<RunRecord> & Pick<Finished, 'reduce' | 'comparison' | 'rows'> = {}): Finished {
  const { reduce, comparison: c, rows, ...rec } = over;
  return { type: 'runFinished', runId, record: record(runId, '2026-11-02T11:00:00.000Z', { context: CONTEXT, cancelled: false, error: null, ...rec }), ...(reduce ? { reduce } : {}), ...(c ? { comparison: c } : {}), ...(rows ? { rows } : {}) };
}

export function initState(over: Partial<PanelState> = {}): PanelState {
  return { connected: true, source: '/work/exp/aurora.hostfile', endpoints: ENDPOINTS, defaults: { model: 'llama-3.1-8b', maxTokens: null, batching: true }, history: HISTORY, ...over };
}

/** A result row as the host streams it. */
export function row(index: number, over: Partial<ResultRow> = {}): ResultRow {
  const sent = 10 + index;
  return {
    index,
    status: 'ok',
    ok: true,
    text: `answer ${index}`,
    reasoning: null,
    error: null,
    endpoint: ENDPOINTS[index % 3]!.id,
    finishReason: 'stop',
    promptTokens: 12,
    completionTokens: 30 + index,
    attempts: 1,
    timings: { queuedMs: 1, sentMs: sent, firstByteMs: sent + 20, firstTokenMs: null, doneMs: sent + 100 + index },
    input: {},
    prompt: `prompt ${index}`,
    ...over,
  };
}

/** A comparison like the core's: rounds from 0, the arms' order alternating (ABBA…); batching sends one request per endpoint. */
export function comparison(rounds = 3, prompts = 60, endpoints = 3): ComparisonView {
  const eps = Array.from({ length: endpoints }, (_, i) => `gpu${String(i + 1).padStart(2, '0')}:8000`);
  const out: ArmRound[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const arm of round % 2 ? (['individual', 'batched'] as const) : (['batched', 'individual'] as const)) {
      const batched = arm === 'batched';
      const requests: ArmRound['requests'] = [];
      const latencies: number[] = [];
      if (batched) {
        eps.forEach((endpoint, i) => {
          const doneMs = 900 + i * 60 + round * 20;
          requests.push({ endpoint, sentMs: 5 + i, doneMs, prompts: prompts / eps.length });
          for (let k = 0; k < prompts / eps.length; k++) latencies.push(doneMs - 5 - i);
        });
      } else {
        for (let p = 0; p < prompts; p++) {
          const endpoint = eps[p % eps.length]!;
          const wave = Math.floor(p / 12);
          const sentMs = 5 + wave * 260 + (p % 12) * 3;
          const doneMs = sentMs + 180 + ((p * 37) % 90) + round * 5;
          requests.push({ endpoint, sentMs, doneMs, prompts: 1 });
          latencies.push(doneMs - sentMs);
        }
      }
      const wallMs = Math.max(...requests.map((r) => r.doneMs)) + 10;
      out.push({
        arm,
        round,
        summary: summary({
          mode: arm,
          wallMs,
          httpRequests: requests.length,
          prompts,
          ok: prompts,
          failed: 0,
          promptThroughput: (prompts * 1000) / wallMs,
          outputTokenThroughput: (prompts * 75 * 1000) / wallMs,
          e2el: { meanMs: latencies.reduce((s, v) => s + v, 0) / latencies.length, medianMs: [...latencies].sort((a, b) => a - b)[latencies.length >> 1]!, p90Ms: Math.max(...latencies), p99Ms: Math.max(...latencies) },
          endpoints: eps.map((endpoint) => ({ endpoint, prompts: prompts / eps.length, ok: prompts / eps.length, failed: 0, requests: requests.filter((r) => r.endpoint === endpoint).length })),
        }),
        requests,
        latenciesMs: latencies,
      });
    }
  }
  return {
    rounds: out,
    cacheSalt: true,
    templatePaths: { batched: '/v1/completions (raw prompt list, no chat template)', individual: '/v1/chat/completions (chat template)' },
  };
}

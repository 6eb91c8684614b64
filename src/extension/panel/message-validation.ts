import { COMPARE_ROUNDS, parseGenerationParams } from '../../core/requests/generation-params.ts';
import { patternParams, routeStrategy } from './pattern-validation.ts';
import { bool, integer, list, record, string } from './validation-primitives.ts';
import { isPanelMessage, type PanelMessage, type Pattern, type PromptRow, type RequestMethod, type RunRequest } from '../../panel/protocol.ts';

/**
 * Checks what the webview posts before the host acts on it: the page renders model output, so the
 * host never trusts a message's shape. Returns the message, or why it is refused.
 */
export function validatePanelMessage(value: unknown): { ok: true; message: PanelMessage } | { ok: false; error: string; requestId?: number } {
  if (!isPanelMessage(value)) return { ok: false, error: 'not a message object with a type' };
  const m = value as Record<string, unknown>;
  try {
    switch (m.type) {
      case 'ready':
      case 'cancel':
      case 'drain':
        return { ok: true, message: { type: m.type } };
      case 'progressSeen':
        if (typeof m.runId !== 'string' || !Number.isSafeInteger(m.seq)) return { ok: false, error: 'progressSeen without a runId and an integer seq' };
        return { ok: true, message: { type: 'progressSeen', runId: m.runId, seq: m.seq as number } };
      case 'request': {
        if (!Number.isSafeInteger(m.requestId)) return { ok: false, error: 'request without an integer requestId' };
        const requestId = m.requestId as number;
        try {
          return { ok: true, message: { type: 'request', requestId, ...request(m.method, m.params) } as PanelMessage };
        } catch (err) {
          return { ok: false, error: (err as Error).message, requestId };
        }
      }
      default:
        return { ok: false, error: `unknown message type ${JSON.stringify(String(m.type)).slice(0, 60)}` };
    }
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

const PATTERNS: readonly Pattern[] = ['scatter', 'map', 'broadcast', 'tree-reduce', 'fan-out-fan-in', 'pipeline', 'blackboard'];
const METHODS: readonly RequestMethod[] = ['run', 'runDetached', 'rerun', 'continueRun', 'connect', 'importFile', 'savePromptSet', 'openInEditor', 'copy', 'openRun', 'exportRun', 'renameRun', 'deleteRun', 'compareRuns', 'fullRows'];

function request(method: unknown, params: unknown): { method: RequestMethod; params: unknown } {
  if (!METHODS.includes(method as RequestMethod)) throw new Error(`unknown request method ${JSON.stringify(String(method)).slice(0, 60)}`);
  const p = record(params ?? {}, 'params');
  switch (method as RequestMethod) {
    case 'run':
    case 'runDetached':
      return { method: method as 'run' | 'runDetached', params: { request: runRequest(p.request) } };
    case 'rerun':
      return { method: 'rerun', params: { id: runId(p.id) } };
    case 'continueRun':
      if (p.only !== 'failed' && p.only !== 'remaining') throw new Error('only must be "failed" or "remaining"');
      return { method: 'continueRun', params: { id: runId(p.id), only: p.only } };
    case 'connect':
      if (typeof p.simulator !== 'boolean') throw new Error('simulator must be true or false');
      return { method: 'connect', params: { simulator: p.simulator } };
    case 'importFile':
      return { method: 'importFile', params: {} };
    case 'savePromptSet':
      return { method: 'savePromptSet', params: { prompts: promptRows(p.prompts) } };
    case 'openInEditor':
      return { method: 'openInEditor', params: { text: string(p.text, 'text'), ...(p.language === undefined ? {} : { language: languageId(p.language) }) } };
    case 'copy':
      return { method: 'copy', params: { text: string(p.text, 'text') } };
    case 'openRun':
      if (p.arm !== undefined && p.arm !== 'batched' && p.arm !== 'individual') throw new Error('arm must be "batched" or "individual"');
      return { method: 'openRun', params: { id: runId(p.id), ...(p.arm ? { arm: p.arm } : {}) } };
    case 'exportRun':
      if (p.format !== 'jsonl' && p.format !== 'csv') throw new Error('format must be "jsonl" or "csv"');
      return { method: 'exportRun', params: { id: runId(p.id), format: p.format } };
    case 'renameRun':
    case 'deleteRun':
      return { method: method as 'renameRun' | 'deleteRun', params: { id: runId(p.id) } };
    case 'compareRuns':
      return { method: 'compareRuns', params: { a: runId(p.a), b: runId(p.b) } };
    case 'fullRows':
      return { method: 'fullRows', params: { runId: runId(p.runId), indices: p.indices === null ? null : list(p.indices, 'indices').map((v, i) => integer(v, `indices[${i}]`, 0)) } };
  }
}

/** A RunRequest with every field checked and nothing else carried over. */
export function runRequest(value: unknown): RunRequest {
  const r = record(value, 'request');
  if (!PATTERNS.includes(r.pattern as Pattern)) throw new Error(`pattern must be one of ${PATTERNS.join(', ')}`);
  const out: RunRequest = {
    pattern: r.pattern as Pattern,
    prompts: promptRows(r.prompts ?? []),
    tags: tags(r.tags ?? []),
    batch: bool(r.batch ?? true, 'batch'),
  };
  if (r.stream !== undefined && bool(r.stream, 'stream')) out.stream = true;
  if (r.template !== undefined) out.template = string(r.template, 'template');
  if (r.items !== undefined) out.items = list(r.items, 'items').map((v, i) => string(v, `items[${i}]`));
  if (r.prompt !== undefined) out.prompt = string(r.prompt, 'prompt');
  if (r.reducePrompt !== undefined) out.reducePrompt = string(r.reducePrompt, 'reducePrompt');
  if (r.fanin !== undefined) out.fanin = integer(r.fanin, 'fanin', 2);
  Object.assign(out, parseGenerationParams(r));
  if (r.compare !== undefined && r.compare !== null) {
    const c = record(r.compare, 'compare');
    out.compare = { rounds: integer(c.rounds ?? 3, 'compare.rounds', COMPARE_ROUNDS.min, COMPARE_ROUNDS.max), cacheSalt: bool(c.cacheSalt ?? true, 'compare.cacheSalt') };
  }
  if (r.patterns !== undefined && r.patterns !== null) out.patterns = patternParams(r.patterns);
  if (r.route !== undefined && r.route !== null) out.route = routeStrategy(r.route);
  return out;
}

function promptRows(value: unknown): PromptRow[] {
  return list(value, 'prompts').map((row, i) => {
    if (typeof row === 'string') return { prompt: row };
    const r = record(row, `prompts[${i}]`);
    const prompt: PromptRow = { prompt: string(r.prompt, `prompts[${i}].prompt`) };
    if (r.input !== undefined) prompt.input = record(r.input, `prompts[${i}].input`);
    return prompt;
  });
}

function tags(value: unknown): Array<[string, string]> {
  return list(value, 'tags').map((t, i) => {
    if (!Array.isArray(t) || t.length !== 2) throw new Error(`tags[${i}] must be a [key, value] pair`);
    return [string(t[0], `tags[${i}][0]`), string(t[1], `tags[${i}][1]`)];
  });
}

/** History ids are file stems the host made (`2025-01-01_12-00-00-000-scatter`): no path can hide in one. */
function runId(value: unknown): string {
  if (typeof value !== 'string' || !/^[\w.-]{1,200}$/.test(value) || value.startsWith('.')) throw new Error('not a run id');
  return value;
}

function languageId(value: unknown): string {
  if (typeof value !== 'string' || !/^[\w.+-]{1,60}$/.test(value)) throw new Error('not a language id');
  return value;
}

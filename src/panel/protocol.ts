/**
 * Every message between the Swarm Lab panel (webview/, in the browser) and the extension
 * (src/extension/panel/). Imported by both sides; type-only imports from the core are erased, so
 * the webview bundle carries none of it. The protocol is data: a `type` tag per message.
 *
 * Handshake: the webview posts `ready` once its script runs; the host posts nothing before that,
 * then `init`. Requests carry a `requestId` and get exactly one `reply`.
 */
import type { PromptResult, RunSummary } from '../core/index.ts';

export type Pattern = 'scatter' | 'map' | 'broadcast' | 'tree-reduce';

export interface PromptRow {
  prompt: string;
  /** Other fields of the prompt's input line (JSONL/CSV columns), carried to the result. */
  input?: Record<string, unknown>;
}

/** What the Run button asks for. */
export interface RunRequest {
  pattern: Pattern;
  /** scatter: the prompt set. */
  prompts: PromptRow[];
  /** map and tree-reduce with items: `{item}` in the template takes each item. */
  template?: string;
  items?: string[];
  /** broadcast, and tree-reduce without items: the one prompt every endpoint answers. */
  prompt?: string;
  reducePrompt?: string;
  fanin?: number;
  /** Only endpoints with these tags; empty = all. */
  tags: Array<[string, string]>;
  model?: string;
  maxTokens?: number;
  temperature?: number;
  /** Batch prompting (scatter and map). */
  batch: boolean;
  /** Run batched and individual on the same prompts, alternating, and compare. */
  compare?: { rounds: number; cacheSalt: boolean };
}

export interface EndpointInfo {
  id: string;
  status: string;
  model: string | null;
  tags: Record<string, string>;
}

/** A result as the panel shows it: the core's result plus the prompt text it answers. */
export type ResultRow = PromptResult & { prompt: string };

export interface ReduceView {
  text: string;
  levels: Array<{ level: number; texts: string[] }>;
}

/** One arm's figures in one round of a comparison. */
export interface ArmRound {
  arm: 'batched' | 'individual';
  round: number;
  summary: RunSummary;
  /** Per request, for the timeline chart: endpoint, send and done times (ms since the arm started). */
  requests: Array<{ endpoint: string; sentMs: number; doneMs: number; prompts: number }>;
  /** End-to-end latency of every successful prompt, ms. */
  latenciesMs: number[];
}

export interface ComparisonView {
  rounds: ArmRound[];
  cacheSalt: boolean;
  /** Which path each arm took: batching uses raw /v1/completions (no chat template). */
  templatePaths: { batched: string; individual: string };
}

/** A saved run (the history list); its results live in `file` under the runs folder. */
export interface RunRecord {
  id: string;
  startedAt: string;
  pattern: Pattern;
  label: string;
  mode: 'batched' | 'individual' | 'compare';
  summary: RunSummary;
  file: string;
  /** How the run ended, so a reopened run can say it was cancelled or why it failed. */
  cancelled?: boolean;
  error?: string | null;
}

export interface PanelState {
  connected: boolean;
  source: string | null;
  endpoints: EndpointInfo[];
  defaults: { model: string; maxTokens: number | null; batching: boolean };
  history: RunRecord[];
}

/** Host → webview. */
export type HostMessage =
  | { type: 'init'; state: PanelState }
  | { type: 'endpoints'; connected: boolean; source: string | null; endpoints: EndpointInfo[] }
  | { type: 'runStarted'; runId: string; pattern: Pattern; total: number; label: string; arm?: 'batched' | 'individual'; round?: number }
  /** Throttled (a few per second, never one per token): new results since the last update. */
  | { type: 'runProgress'; runId: string; done: number; ok: number; failed: number; total: number; elapsedMs: number; results: ResultRow[] }
  | { type: 'runFinished'; runId: string; summary: RunSummary; error: string | null; cancelled: boolean; reduce?: ReduceView }
  | { type: 'comparison'; comparison: ComparisonView }
  | { type: 'history'; history: RunRecord[] }
  /** A run from history (or one started from the palette), to show in full. */
  | { type: 'showRun'; record: RunRecord; results: ResultRow[]; reduce?: ReduceView; comparison?: ComparisonView }
  | { type: 'reply'; requestId: number; ok: boolean; value?: unknown; error?: string };

/** Requests the webview makes and what each replies with. */
export interface Requests {
  /** The host shows an open dialog (JSONL / TXT / CSV) and returns the file's text. */
  importFile: { params: Record<string, never>; result: { name: string; text: string } | null };
  /** Saves the prompt set as `*.prompts.jsonl`; returns its path (null if the user cancelled). */
  savePromptSet: { params: { prompts: PromptRow[] }; result: string | null };
  /** Opens text (a full prompt or response) in an editor. */
  openInEditor: { params: { text: string; language?: string }; result: null };
  copy: { params: { text: string }; result: null };
  openRun: { params: { id: string }; result: null };
  exportRun: { params: { id: string; format: 'jsonl' | 'csv' }; result: string | null };
  /** Per-prompt differences of two runs, and their figures side by side. */
  compareRuns: { params: { a: string; b: string }; result: { a: RunRecord; b: RunRecord; changed: Array<{ index: number; a: string; b: string }> } };
}

export type RequestMethod = keyof Requests;

/** Webview → host. */
export type PanelMessage =
  | { type: 'ready' }
  | { type: 'run'; request: RunRequest }
  | { type: 'rerun'; id: string }
  | { type: 'cancel' }
  | { [M in RequestMethod]: { type: 'request'; requestId: number; method: M; params: Requests[M]['params'] } }[RequestMethod];

export function isPanelMessage(value: unknown): value is PanelMessage {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

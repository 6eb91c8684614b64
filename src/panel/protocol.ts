/**
 * Every message between the Swarm Lab panel (webview/, in the browser) and the extension
 * (src/extension/panel/). Imported by both sides; type-only imports from the core are erased, so
 * the webview bundle carries none of it. The protocol is data: a `type` tag per message.
 *
 * Handshake: the webview posts `ready` once its script runs; the host posts nothing before that,
 * then `init`. Requests carry a `requestId` and get exactly one `reply`. Starting a run is a
 * request too; the run's lifecycle (RunMessage) follows.
 */
import type { ArmRound, Arm, Comparison } from '../core/run/compare.ts';
import type { Aggregate, AggregateName, PromptResult, RouteStrategy, RunSummary } from '../core/index.ts';
import type { EndpointStatus } from '../core/endpoints/endpoint-status.ts';
import type { GenerationParams } from '../core/requests/generation-params.ts';
/** Both sides name endpoint statuses in the one vocabulary the CLI and the tree use. */
export { STATUS_LABELS } from '../core/endpoints/endpoint-status.ts';
import type { ServerLoad } from '../core/endpoints/server-metrics.ts';
import type { PatternParams, PortedPattern, StageParams, StepView } from './pattern-params.ts';

export type Pattern = 'scatter' | 'map' | 'broadcast' | 'tree-reduce' | PortedPattern;
export type { PortedPattern, StageParams, PatternParams, StepView };
export type { AggregateName, Aggregate, RouteStrategy, ServerLoad };

/** The reduce prompt a tree-reduce starts from, in the panel and in `Swarm: Tree Reduce`. */
export const DEFAULT_REDUCE_PROMPT = 'Merge these answers into one, keeping every distinct point:\n{responses}';

export interface PromptRow {
  prompt: string;
  /** Other fields of the prompt's input line (JSONL/CSV columns), carried to the result. */
  input?: Record<string, unknown>;
}

/** What the Run button asks for: the core's generation parameters (one schema, vLLM's limits), and how to run. */
export interface RunRequest extends GenerationParams {
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
  /** Batch prompting (scatter and map). */
  batch: boolean;
  /** Stream answers: the core then measures TTFT, TPOT and ITL (and counts each prompt's tokens, batched too). */
  stream?: boolean;
  /** Run batched and individual on the same prompts, alternating, and compare. */
  compare?: { rounds: number; cacheSalt: boolean };
  /** See the patterns block below. */
  patterns?: PatternParams;
  route?: RouteStrategy;
}

export interface EndpointInfo {
  id: string;
  /** The pool's health of it (core's one status union), `excluded` when taken out of runs. */
  status: EndpointStatus;
  model: string | null;
  tags: Record<string, string>;
}

/** A result as the panel shows it: the core's result plus the prompt text it answers. */
export type ResultRow = PromptResult & { prompt: string; cut?: RowCut };

/**
 * What a live row (runProgress) left out, so its message stays small: a row's answer crosses the
 * three hops to the page at a few MB a second, and 10,000 long answers held "done" back by seconds.
 * `text` and `reasoning`: their full lengths, the row holding their first PREVIEW_CHARS (none of
 * them, in a message of more than BURST_ROWS rows); `texts` and `embedding`: how many the row left
 * out. The page asks for rows whole (`fullRows`) when it needs more than it has: an answer in view
 * that came without its start, an opened row, a copy, a search.
 */
export interface RowCut {
  text?: number;
  reasoning?: number;
  texts?: number;
  embedding?: number;
}

/** A tree-reduce's levels; the ported patterns' steps (see the patterns block) show the same way. */
export interface ReduceView {
  text: string;
  levels: StepView[];
  /** Every answer that did not reach the final one (failed, cancelled, blank), step by step; absent in records from before it. */
  missing?: MissingAnswer[];
}

/** An answer the final one lacks, and why. */
export interface MissingAnswer {
  level: number;
  /** Its item, group or endpoint: `item 4`, `group 2`, `x4001c0s0b0n0:6739`. */
  name: string;
  reason: string;
  /** A tree-reduce group that failed: the items (from 0) whose answers it carried, lost with it. */
  items?: number[];
}

/** One arm's figures in one round of a comparison (the core's). */
export type { ArmRound, Arm };

/**
 * A comparison as the panel shows it: the core's, without how it ended (the run says that), and
 * the round of each arm whose rows are saved — the arm's median round, so its rows are the ones its
 * figures describe. Records from before it existed kept round 0 of each arm.
 */
export type ComparisonView = Pick<Comparison, 'rounds' | 'cacheSalt' | 'templatePaths'> & { kept?: Partial<Record<Arm, number>> };

/** Which arm and round of a comparison a set of rows is. */
export interface ArmShown {
  arm: Arm;
  round: number;
}

export type RunKind = 'single' | 'comparison';

/** The scheduler job whose servers a run used (a swarm launched from the editor). */
export interface RunJob {
  id: string;
  scheduler: 'slurm' | 'pbs';
  name: string;
  /** The nodes the scheduler gave it. */
  nodes: string[];
  /** The job-script template it was made from. */
  template: string;
}

/** What a run ran on and with: saved with its record, so History can say why two runs differ. */
export interface RunContext {
  /** The hostfile (or simulator) connected when the run started. */
  hostfile: string | null;
  /** Endpoints the run could use (excluded ones left out). */
  endpoints: number;
  model: string | null;
  /** What the endpoints' `GET /version` said (vLLM's version; several when they differ), once it answered. */
  serverVersion?: string;
  /** The launched job the endpoints ran in, when they did. */
  job?: RunJob;
  /** The generation parameters it sent (its model is `model` above), and how it ran. */
  params: { batch: boolean; stream?: boolean; tags: Array<[string, string]>; fanin?: number } & Omit<GenerationParams, 'model'> & Pick<RunRequest, 'route'>;
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
  /** Drained (a walltime about to end): what was in flight finished, the prompts not sent are cancelled. */
  drained?: boolean;
  /** Absent in records saved before it existed. */
  context?: RunContext;
  /** A detached run (`--detach`): it lives where it runs, not in the editor; see DetachedInfo. */
  detached?: DetachedInfo;
}

/**
 * A detached run as History shows it, read from its status file (here, or on the login node over
 * the connected swarm's login): how it stands now and where it lives. Its rows are its results file's.
 */
export interface DetachedInfo {
  state: 'starting' | 'running' | 'finished' | 'died' | 'elsewhere';
  exitCode?: number;
  /** `this machine`, or the SSH login it lives behind. */
  where: string;
  /** Prompts settled, from its status file (while it goes, the record's summary holds that file's counts too). */
  done: number;
}

/**
 * A saved run as History lists it: its record with only the figures the list shows. A record's
 * summary holds every endpoint's figures (1,000 entries at 1,000 endpoints); the list is sent at
 * every run's end and never needs them (the record in full comes with `openRun` and `compareRuns`).
 */
export type HistoryEntry = Omit<RunRecord, 'summary'> & { summary: Pick<RunSummary, 'prompts' | 'ok' | 'failed' | 'cancelled' | 'wallMs' | 'promptThroughput'> };

/** A finished run in full: what `openRun` answers and `showRun` carries. */
export interface OpenedRun {
  record: RunRecord;
  /**
   * Its rows as JSONL, one ResultRow a line in input order, as its results file holds them: one
   * string crosses to the webview far faster than 100,000 objects (structured clone), and a saved
   * run's file goes as it is, unparsed.
   */
  resultsJsonl: string;
  reduce?: ReduceView;
  comparison?: ComparisonView;
  /** A comparison: the arm and round whose rows `resultsJsonl` holds. */
  arm?: ArmShown;
}

export interface PanelState {
  connected: boolean;
  source: string | null;
  endpoints: EndpointInfo[];
  defaults: { model: string; maxTokens: number | null; batching: boolean };
  history: HistoryEntry[];
}

/**
 * A run's lifecycle, stated by the host: `runStarted`, then (a comparison) `armStarted` and
 * `armFinished` per arm and round, `runProgress` in between (throttled, and one at a time: each
 * waits for the page's `progressSeen` of the one before), and one `runFinished` as
 * soon as its rows and figures are known (before its record is written: the panel says "done"
 * without waiting on the disk). Its record is saved next, and a `history` listing it follows.
 * Every one names its `runId`, which is also its record's id.
 *
 * A run is ACTIVE from `runStarted` until that `history` (its record saved), and one state
 * (RunOrchestrator's) says so for every origin, panel or palette:
 * - while its rows are still coming (before `runFinished`), a `run`, `rerun` or `continueRun`
 *   request is refused ("a run is going") and `cancel` cancels it;
 * - after `runFinished`, while its record is being saved, a new run waits for the save and then
 *   starts, and requests that name the finished run (`openRun`, `rerun`, `exportRun`, …) wait for
 *   its record: a `runFinished` run can be asked for at once.
 * A webview that says `ready` meanwhile hears every active run again from its `runStarted`, its
 * rows, and (when it came) its `runFinished`.
 *
 * Detached runs (record.detached) have no part in this lifecycle: they run outside the editor and
 * never make one active. `history` lists them from their status files, sent again as they move;
 * one opened (`openRun`) comes back as `showRun` each time its rows grow, until it ends.
 */
export type RunMessage =
  | {
      type: 'runStarted';
      runId: string;
      kind: RunKind;
      pattern: Pattern;
      label: string;
      /** Prompts it answers, known at launch (per arm, for a comparison). */
      total: number;
      /** A comparison's rounds per arm; 1 otherwise. */
      rounds: number;
      startedAt: string;
      context: RunContext;
      /** Each prompt by input index, when known at launch (scatter, map): pending rows show theirs. */
      prompts?: string[];
      /** A comparison: how its arms are set up (their rounds come with `armFinished`). */
      comparison?: Omit<ComparisonView, 'rounds'>;
    }
  | { type: 'armStarted'; runId: string; arm: Arm; round: number }
  /**
   * Throttled (a few per second, never one per token): new results since the last update. `servers`:
   * while an unstreamed batch runs (its answers come only at its end), the servers' own `/metrics`
   * summed over the run's endpoints — sequences running and waiting, and finished and tokens
   * generated since their first reading (on those servers, by anyone).
   */
  | {
      type: 'runProgress';
      runId: string;
      done: number;
      ok: number;
      failed: number;
      total: number;
      elapsedMs: number;
      /**
       * The rows that came since the last progress message, as JSONL (result-rows.ts): one ResultRow a
       * line, in the order they came, light (lightRowsJsonl: long answers cut, see RowCut; a prompt
       * that `runStarted` listed left out, the page has it; fields by position). Under flow control one message carries every row that came
       * while the page drew the last (3,410 at 10,000 prompts over 1,000 endpoints); as objects they
       * were copied field by field at each of the three hops to the page (extension host, workbench,
       * webview frame), all on the thread the panel draws on. A string crosses each hop whole, and
       * the page parses it a slice at a time (parseResultRow in result-rows.ts), between its frames.
       */
      resultsJsonl: string;
      servers?: ServerLoad;
      /**
       * Flow control: the page answers `progressSeen` with this number once it has drawn the message,
       * and the host sends no other progress of the run until then (what comes meanwhile goes with
       * the next one). At 10,000 prompts over 1,000 endpoints messages queued in the workbench's
       * thread faster than the page drew them and reached it tens of seconds late. Absent on the last
       * progress before an arm's or the run's end, which is never held back.
       */
      seq?: number;
    }
  /** `figures` is null for an arm cancelled or failed before it finished. */
  | { type: 'armFinished'; runId: string; arm: Arm; round: number; figures: ArmRound | null; cancelled: boolean; error: string | null }
  /**
   * A comparison's also carries the rows its record keeps (the batched arm's median round): the
   * table held the last arm's live, and now shows the arm its figures and header name.
   */
  | {
      type: 'runFinished';
      runId: string;
      record: RunRecord;
      reduce?: ReduceView;
      comparison?: ComparisonView;
      rows?: { arm: ArmShown; resultsJsonl: string };
      /** When the run ended on the host's clock (epoch ms; the core's run settled), so the page can tell how long "done" took to show. */
      endedAt?: number;
    };

/** Host → webview. */
export type HostMessage =
  | { type: 'init'; state: PanelState }
  | { type: 'endpoints'; connected: boolean; source: string | null; endpoints: EndpointInfo[] }
  /**
   * Only statuses moved (the same endpoints, models and tags): each changed endpoint's new status.
   * During a run hedges bench and restore endpoints about once a second; 1,000 endpoints resent
   * whole each time crossed the workbench's thread, which the panel shares, for a few changed words.
   */
  | { type: 'endpointStatus'; changes: Array<[id: string, status: EndpointStatus]> }
  | RunMessage
  /** Newest first: sent at `init`, once a run's record is saved, and after a rename or delete. */
  | { type: 'history'; history: HistoryEntry[] }
  /** A finished run the webview missed (it was hidden or closed while the run went), to show in full. */
  | ({ type: 'showRun' } & OpenedRun)
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
  /** Runs `Swarm: Connect to Hostfile`, or `Swarm: Start Local Simulator` (the not-connected banner's links). */
  connect: { params: { simulator: boolean }; result: null };
  /** Starts a run; answers its id (its `runStarted` follows) or fails with why it cannot start. */
  run: { params: { request: RunRequest }; result: { runId: string } };
  /**
   * "Run on the cluster": a scatter run started detached where the swarm is (the login node through
   * the window's one SSH login, else this machine), outliving the editor; answers its History id.
   * It is no run of this lifecycle: History lists it (record.detached) as it goes.
   */
  runDetached: { params: { request: RunRequest }; result: { runId: string } };
  /** Runs a saved run again, on the hostfile it ran on. */
  rerun: { params: { id: string }; result: { runId: string } };
  /**
   * A new run of a saved scatter or map run's failed prompts ("Rerun failed") or cancelled ones
   * ("Run remaining"), its answers merged into a copy of that run's results, in input order.
   */
  continueRun: { params: { id: string; only: 'failed' | 'remaining' }; result: { runId: string } };
  /** A saved run in full; a comparison's rows are its batched arm's unless `arm` asks for the other. */
  openRun: { params: { id: string; arm?: Arm }; result: OpenedRun };
  exportRun: { params: { id: string; format: 'jsonl' | 'csv' }; result: string | null };
  /** The host asks for the new name; answers it (null if the user cancelled). History follows. */
  renameRun: { params: { id: string }; result: string | null };
  /** The host asks first; answers whether the run (record and results) was deleted. History follows. */
  deleteRun: { params: { id: string }; result: boolean };
  /**
   * Per-prompt differences of two runs (prompts answered in both: ok or failed), how many prompts
   * were not answered in both (cancelled or missing in either: not compared), and their figures side by side.
   */
  compareRuns: { params: { a: string; b: string }; result: { a: RunRecord; b: RunRecord; changed: Array<{ index: number; a: string; b: string }>; unanswered?: number } };
  /** Rows of a run (going or saved) whole, as JSONL: those at `indices`, or every one (null). */
  fullRows: { params: { runId: string; indices: number[] | null }; result: string };
}

export type RequestMethod = keyof Requests;

/** Webview → host. */
export type PanelMessage =
  | { type: 'ready' }
  | { type: 'cancel' }
  /** Drains the run going: what is in flight finishes, nothing new is sent; the rest is kept as drained for a resume. */
  | { type: 'drain' }
  /** The page drew the run's progress message `seq` (flow control: see runProgress). */
  | { type: 'progressSeen'; runId: string; seq: number }
  | { [M in RequestMethod]: { type: 'request'; requestId: number; method: M; params: Requests[M]['params'] } }[RequestMethod];

export function isPanelMessage(value: unknown): value is PanelMessage {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

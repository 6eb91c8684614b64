import * as vscode from 'vscode';
import { medianRound } from '../../core/run/compare.ts';
import { checkTreeReduce, normalizePrompts, type PromptInput, type RunSummary } from '../../core/index.ts';
import type { SwarmConnection } from '../connection.ts';
import type { Launched } from '../panel/run-orchestrator.ts';
import type { PanelHost } from '../panel/panel-host.ts';
import { DEFAULT_REDUCE_PROMPT } from '../../panel/protocol.ts';
import { promptsFrom } from '../prompt-source.ts';
import type { Services } from '../services.ts';
import { settings } from '../settings.ts';

/** Arguments other tools (CodeLens, tests, the panel) pass instead of answering prompts. */
export interface ScatterArgs {
  uri?: vscode.Uri;
  prompts?: Array<string | PromptInput>;
  batch?: boolean;
  tags?: Array<[string, string]>;
  /** Open the results file when done (default true). */
  open?: boolean;
}

export interface ScatterOutcome {
  resultsUri: vscode.Uri;
  summary: RunSummary;
  cancelled: boolean;
}

/**
 * `Swarm: Scatter Prompts`: every prompt to the swarm, results to `.swarm/runs/…jsonl` in input order;
 * the panel follows the run live when open and shows it when done (opened unless `open: false`).
 */
export async function scatter(services: Services, panel: PanelHost, args: ScatterArgs = {}): Promise<ScatterOutcome | undefined> {
  const connection = requireConnection(services);
  if (!connection) return undefined;
  const source = args.prompts ? { prompts: normalizePrompts(args.prompts), label: `${args.prompts.length} prompts` } : await promptsFrom(args.uri);
  if (!source) return undefined;
  const tags = args.tags ?? (args.prompts ? [] : await pickTags(connection));
  if (!tags) return undefined;
  const batch = args.batch ?? (args.prompts ? settings().batching : await pickBatching());
  if (batch === undefined) return undefined;

  const mode = batch ? 'batched' : 'individual';
  const launched = await launchOrSay(panel, {
    request: { pattern: 'scatter', prompts: source.prompts, tags, batch },
    label: `${source.label} · ${mode}`,
    notify: `Swarm: scattering ${source.prompts.length.toLocaleString('en-US')} prompts (${mode})`,
  });
  if (!launched?.report) return undefined;
  const report = launched.report;
  if (report.error && !report.cancelled) services.log.error(`scatter: ${report.error}`);
  panel.show(launched, args.open ?? true);
  void announce(services, panel, launched, source.prompts);
  return { resultsUri: launched.resultsUri, summary: report.summary, cancelled: report.cancelled };
}

async function announce(services: Services, panel: PanelHost, launched: Launched, prompts: PromptInput[]): Promise<void> {
  const report = launched.report!;
  const s = report.summary;
  const what = `${s.ok.toLocaleString('en-US')}/${s.prompts.toLocaleString('en-US')} ok in ${(s.wallMs / 1000).toFixed(2)} s, ${s.httpRequests.toLocaleString('en-US')} HTTP requests`;
  // A cancel with a reason (the job's walltime reached) says it.
  const text = report.cancelled
    ? `Swarm: ${report.error ?? 'cancelled'} — kept ${what}`
    : report.drained
      ? `Swarm: drained — kept ${what}; ${s.cancelled.toLocaleString('en-US')} not sent (a resume on the next swarm sends them)`
      : s.failed
        ? `Swarm: ${what}; ${s.failed} failed`
        : `Swarm: ${what}`;
  // A toast that reports failures opens the log that has each one (the server's message per prompt).
  const pick = await (s.failed ? vscode.window.showWarningMessage(text, 'Show Log', 'Open Panel', 'Compare') : vscode.window.showInformationMessage(text, 'Open Panel', 'Compare'));
  if (pick === 'Show Log') services.log.show();
  if (pick === 'Open Panel') panel.show(launched, true);
  if (pick === 'Compare') await vscode.commands.executeCommand('swarmLab.compare', { prompts });
}

export interface TreeReduceArgs {
  prompt?: string;
  reducePrompt?: string;
  items?: string[];
  fanin?: number;
}

/** `Swarm: Tree Reduce`: leaf answers merged `fanin` at a time until one is left; the panel shows the final text and every level. */
export async function treeReduceCommand(services: Services, panel: PanelHost, args: TreeReduceArgs = {}): Promise<{ text: string; levels: Array<{ level: number; texts: string[] }> } | undefined> {
  const connection = requireConnection(services);
  if (!connection) return undefined;
  const prompt =
    args.prompt ??
    (await vscode.window.showInputBox({
      title: 'Swarm: Tree Reduce (1/3)',
      prompt: 'Leaf prompt; {item} takes each item when items come from the active editor',
      ignoreFocusOut: true,
      // An empty leaf prompt is said, not silently dropped (Escape still cancels).
      validateInput: (v) => (v.trim() ? undefined : 'Type the prompt every leaf answers (or press Escape to cancel).'),
    }));
  if (!prompt) return undefined;
  const items = args.items ?? (prompt.includes('{item}') ? (await promptsFrom())?.prompts.map((p) => p.prompt) : undefined);
  const reducePrompt =
    args.reducePrompt ??
    (await vscode.window.showInputBox({
      title: 'Swarm: Tree Reduce (2/3)',
      prompt: 'Reduce prompt: {responses} takes the answers to merge, {level} the round',
      value: DEFAULT_REDUCE_PROMPT,
      ignoreFocusOut: true,
      validateInput: (v) => (v.includes('{responses}') ? undefined : 'The reduce prompt must contain {responses}: that is where the answers to merge go.'),
    }));
  if (!reducePrompt) return undefined;
  const faninText = args.fanin?.toString() ?? (await vscode.window.showInputBox({ title: 'Swarm: Tree Reduce (3/3)', prompt: 'Fan-in: answers merged per reduce prompt', value: '4', validateInput: (v) => (/^\d+$/.test(v) && Number(v) >= 2 ? undefined : 'an integer of at least 2') }));
  if (!faninText) return undefined;
  const input = { prompt, reducePrompt, fanin: Number(faninText), ...(items ? { items } : {}) };
  try {
    checkTreeReduce(input);
  } catch (err) {
    void vscode.window.showErrorMessage(`Swarm: ${(err as Error).message}`);
    return undefined;
  }
  const launched = await launchOrSay(panel, {
    request: { pattern: 'tree-reduce', prompts: [], ...(items ? { template: prompt, items: items.map(String) } : { prompt }), reducePrompt, fanin: input.fanin, tags: [], batch: false },
    notify: 'Swarm: tree-reduce',
  });
  if (!launched) return undefined;
  panel.show(launched, true);
  if (!launched.saved.reduce) {
    void vscode.window.showErrorMessage(`Swarm: tree-reduce failed: ${launched.report?.error}`);
    return undefined;
  }
  return launched.saved.reduce;
}

export interface CompareArgs {
  uri?: vscode.Uri;
  prompts?: Array<string | PromptInput>;
  /** Rounds of both arms, alternating (default 3). */
  rounds?: number;
  /** Salt vLLM's prefix cache per arm and round (default true). */
  cacheSalt?: boolean;
}

/**
 * `Swarm: Compare Batched vs Individual`: the same prompts both ways, the arms alternating over
 * rounds, side by side in the panel. Returns each arm's median round.
 */
export async function compare(services: Services, panel: PanelHost, args: CompareArgs = {}): Promise<{ batched: RunSummary; individual: RunSummary } | undefined> {
  const connection = requireConnection(services);
  if (!connection) return undefined;
  const source = args.prompts ? { prompts: normalizePrompts(args.prompts), label: `${args.prompts.length} prompts` } : await promptsFrom(args.uri);
  if (!source) return undefined;
  const rounds = args.rounds ?? 3;
  const launched = await launchOrSay(panel, {
    request: { pattern: 'scatter', prompts: source.prompts, tags: [], batch: true, compare: { rounds, cacheSalt: args.cacheSalt ?? true } },
    label: `${source.label} · batched vs individual × ${rounds}`,
    notify: `Swarm: compare (${source.prompts.length} prompts)`,
  });
  if (!launched?.comparison) return undefined;
  panel.show(launched, true);
  const batched = medianRound(launched.comparison.rounds, 'batched');
  const individual = medianRound(launched.comparison.rounds, 'individual');
  if (launched.cancelled || !batched || !individual) return undefined;
  return { batched: batched.summary, individual: individual.summary };
}

/**
 * Runs through the panel's orchestrator, so the panel hears it as it would a run of its own; input
 * the run cannot take is said in an error message.
 */
async function launchOrSay(panel: PanelHost, launch: Parameters<PanelHost['runs']['launch']>[0]): Promise<Launched | undefined> {
  try {
    return await (await panel.runs.launch(launch)).done;
  } catch (err) {
    void vscode.window.showErrorMessage(`Swarm: ${(err as Error).message}`);
    return undefined;
  }
}

function requireConnection(services: Services): SwarmConnection | undefined {
  const connection = services.session.connection;
  if (!connection) {
    void vscode.window.showWarningMessage('Swarm: connect a hostfile first.', 'Connect', 'Start Local Simulator').then((pick) => {
      if (pick === 'Connect') void vscode.commands.executeCommand('swarmLab.connect');
      if (pick === 'Start Local Simulator') void vscode.commands.executeCommand('swarmLab.startSimulator');
    });
  }
  return connection;
}

/** All endpoints, or those of one `role=` (a job's hostfile often mixes chat and embedding servers). */
async function pickTags(connection: SwarmConnection): Promise<Array<[string, string]> | undefined> {
  const roles = [...new Set(connection.endpoints.map((e) => e.tags.role).filter((r): r is string => Boolean(r)))];
  if (!roles.length) return [];
  const items = [{ label: 'All endpoints', tags: [] as Array<[string, string]> }, ...roles.map((role) => ({ label: `role=${role}`, description: `${connection.endpoints.filter((e) => e.tags.role === role).length} endpoints`, tags: [['role', role]] as Array<[string, string]> }))];
  return (await vscode.window.showQuickPick(items, { title: 'Swarm: which endpoints?' }))?.tags;
}

async function pickBatching(): Promise<boolean | undefined> {
  const batched = { label: 'Batched', description: 'one /v1/completions request per endpoint with its list of prompts', batch: true };
  const individual = { label: 'Individual', description: 'one /v1/chat/completions request per prompt (chat template applied)', batch: false };
  const items = settings().batching ? [batched, individual] : [individual, batched];
  return (await vscode.window.showQuickPick(items, { title: 'Swarm: how to send them?' }))?.batch;
}

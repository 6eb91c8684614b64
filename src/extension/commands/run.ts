import * as vscode from 'vscode';
import { checkTreeReduce, normalizePrompts, scatterGather, summaryRows, treeReduce, type PromptInput, type RunReport, type RunSummary } from '../../core/index.ts';
import type { SwarmConnection } from '../connection.ts';
import { promptsFrom } from '../prompt-source.ts';
import { resultsFile } from '../results-file.ts';
import { withRunProgress } from '../run-progress.ts';
import type { Services } from '../services.ts';
import { generationOptions, settings } from '../settings.ts';

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

/** `Swarm: Scatter Prompts`: every prompt to the swarm, results to `.swarm/runs/…jsonl` in input order. */
export async function scatter(services: Services, args: ScatterArgs = {}): Promise<ScatterOutcome | undefined> {
  const connection = requireConnection(services);
  if (!connection) return undefined;
  const source = args.prompts ? { prompts: normalizePrompts(args.prompts), label: `${args.prompts.length} prompts` } : await promptsFrom(args.uri);
  if (!source) return undefined;
  const tags = args.tags ?? (args.prompts ? [] : await pickTags(connection));
  if (!tags) return undefined;
  const batch = args.batch ?? (args.prompts ? settings().batching : await pickBatching());
  if (batch === undefined) return undefined;

  const file = await resultsFile(services.context.globalStorageUri, 'scatter');
  const run = scatterGather(connection.swarm, source.prompts, { ...generationOptions(settings()), tags, exclude: connection.excluded, batch });
  const done = file.follow(run);
  const uri = file.uri;
  const mode = batch ? 'batched' : 'individual';
  const report = await withRunProgress(services, run, `Swarm: scattering ${source.prompts.length.toLocaleString('en-US')} prompts (${mode})`);
  await done;
  if (report.error && !report.cancelled) services.log.error(`scatter: ${report.error}`);
  if (args.open ?? true) await vscode.window.showTextDocument(uri, { preview: false });
  void announce(report, uri, source.prompts);
  return { resultsUri: uri, summary: report.summary, cancelled: report.cancelled };
}

async function announce(report: RunReport<unknown>, uri: vscode.Uri, prompts: PromptInput[]): Promise<void> {
  const s = report.summary;
  const what = `${s.ok.toLocaleString('en-US')}/${s.prompts.toLocaleString('en-US')} ok in ${(s.wallMs / 1000).toFixed(2)} s, ${s.httpRequests.toLocaleString('en-US')} HTTP requests`;
  const text = report.cancelled ? `Swarm: cancelled — kept ${what}` : s.failed ? `Swarm: ${what}; ${s.failed} failed (see the log)` : `Swarm: ${what}`;
  const pick = await (s.failed ? vscode.window.showWarningMessage : vscode.window.showInformationMessage)(text, 'Show Summary', 'Compare', 'Open Results');
  if (pick === 'Show Summary') await showMarkdown(`# Swarm run\n\n${markdownTable([['', s.mode], ...summaryRows(s)])}\n\nResults: \`${vscode.workspace.asRelativePath(uri)}\`\n`);
  if (pick === 'Compare') await vscode.commands.executeCommand('swarmLab.compare', { prompts });
  if (pick === 'Open Results') await vscode.window.showTextDocument(uri);
}

export interface TreeReduceArgs {
  prompt?: string;
  reducePrompt?: string;
  items?: string[];
  fanin?: number;
}

/** `Swarm: Tree Reduce`: leaf answers merged `fanin` at a time until one is left; shows the final text and every level. */
export async function treeReduceCommand(services: Services, args: TreeReduceArgs = {}): Promise<{ text: string; levels: Array<{ level: number; texts: string[] }> } | undefined> {
  const connection = requireConnection(services);
  if (!connection) return undefined;
  const prompt = args.prompt ?? (await vscode.window.showInputBox({ title: 'Swarm: Tree Reduce (1/3)', prompt: 'Leaf prompt; {item} takes each item when items come from the active editor', ignoreFocusOut: true }));
  if (!prompt) return undefined;
  const items = args.items ?? (prompt.includes('{item}') ? (await promptsFrom())?.prompts.map((p) => p.prompt) : undefined);
  const reducePrompt =
    args.reducePrompt ??
    (await vscode.window.showInputBox({
      title: 'Swarm: Tree Reduce (2/3)',
      prompt: 'Reduce prompt: {responses} takes the answers to merge, {level} the round',
      value: 'Below are several responses. Merge them into a concise summary (level {level}):\n\n{responses}',
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
  const file = await resultsFile(services.context.globalStorageUri, 'tree-reduce');
  const run = treeReduce(connection.swarm, input, { ...generationOptions(settings()), exclude: connection.excluded });
  const done = file.follow(run);
  const report = await withRunProgress(services, run, 'Swarm: tree-reduce');
  await done;
  if (!report.outcome) {
    void vscode.window.showErrorMessage(`Swarm: tree-reduce failed: ${report.error}`);
    return undefined;
  }
  const levels = report.outcome.levels.map((l) => `## Level ${l.level} — ${l.texts.length} answer${l.texts.length === 1 ? '' : 's'}\n\n${l.texts.map((t, i) => `### ${i + 1}\n\n${fence(t)}`).join('\n\n')}`);
  await showMarkdown(`# Tree-reduce\n\n## Final answer\n\n${fence(report.outcome.text)}\n\n${levels.join('\n\n')}\n`);
  return report.outcome;
}

/** `Swarm: Compare Batched vs Individual`: the same prompts both ways, side by side. */
export async function compare(services: Services, args: { uri?: vscode.Uri; prompts?: Array<string | PromptInput> } = {}): Promise<{ batched: RunSummary; individual: RunSummary } | undefined> {
  const connection = requireConnection(services);
  if (!connection) return undefined;
  const source = args.prompts ? { prompts: normalizePrompts(args.prompts), label: `${args.prompts.length} prompts` } : await promptsFrom(args.uri);
  if (!source) return undefined;
  const summaries: RunSummary[] = [];
  for (const batch of [true, false]) {
    const run = scatterGather(connection.swarm, source.prompts, { ...generationOptions(settings()), exclude: connection.excluded, batch });
    const report = await withRunProgress(services, run, `Swarm: compare — ${batch ? 'batched' : 'individual'} (${source.prompts.length} prompts)`);
    if (report.cancelled) return undefined;
    summaries.push(report.summary);
  }
  const [batched, individual] = summaries as [RunSummary, RunSummary];
  const rows = summaryRows(batched).map(([k, v], i): [string, string, string] => [k, v, summaryRows(individual)[i]![1]]);
  const speedup = individual.wallMs / batched.wallMs;
  const verdict = `Batched sent ${batched.httpRequests} HTTP requests where individual sent ${individual.httpRequests}, and took ${(1 / speedup).toFixed(2)}× the wall time (${speedup.toFixed(2)}× speed-up).`;
  services.runs.setComparison(verdict);
  await showMarkdown(`# Batched vs individual — ${source.label}\n\n${markdownTable([['', 'batched', 'individual'], ...rows])}\n\n${verdict}\n\nBatch mode uses raw \`/v1/completions\` (no chat template); individual mode uses \`/v1/chat/completions\` (the server applies the chat template).\n`);
  return { batched, individual };
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

async function showMarkdown(content: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content });
  await vscode.window.showTextDocument(doc, { preview: false });
}

function markdownTable(rows: string[][]): string {
  const esc = (c: string) => c.replace(/\|/g, '\\|');
  const [head, ...body] = rows;
  return [`| ${head!.map(esc).join(' | ')} |`, `|${head!.map(() => ' --- ').join('|')}|`, ...body.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}

/** Model output shown as text in markdown: a fence longer than any backtick run inside it. */
function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}text\n${text}\n${ticks}`;
}

import * as vscode from 'vscode';
import { failureRate, STATUS_ORDER, type EndpointStatus } from '../core/endpoints/endpoint-status.ts';
import type { EndpointView, SwarmConnection } from './connection.ts';
import { describeJob } from '../core/scheduler/job-format.ts';
import { isFinished } from '../core/scheduler/job.ts';
import { jobPhrase, type JobWatch, type WatchedJob } from './job-watch.ts';
import type { RunTracker } from './run-tracker.ts';
import { STATUS_LABELS } from '../core/endpoints/endpoint-status.ts';
import { throttle, type Throttled } from '../core/run/throttle.ts';
import { naturalOrder } from '../core/endpoints/natural-order.ts';

type Node = { kind: 'job'; job: WatchedJob } | { kind: 'summary'; text: string; filter: string | null; tooltip: string } | { kind: 'group'; role: string; members: EndpointView[] } | { kind: 'endpoint'; view: EndpointView };

export type EndpointSort = 'hostfile' | 'name' | 'status' | 'failure-rate';

const ICONS: Record<EndpointStatus, [string, string]> = {
  up: ['pass-filled', 'testing.iconPassed'],
  booting: ['loading~spin', 'charts.yellow'],
  degraded: ['warning', 'list.warningForeground'],
  down: ['error', 'testing.iconFailed'],
  'tunnel-down': ['debug-disconnect', 'testing.iconFailed'],
  unknown: ['circle-large-outline', 'disabledForeground'],
  excluded: ['circle-slash', 'disabledForeground'],
};

/** The context key the view title's filter buttons follow (VS Code's convention for toggles). */
const FILTER_KEY = 'swarmLab.endpoints.unhealthyOnly';

/**
 * The Endpoints view: a summary row (how many healthy, degraded, down), then a row per endpoint,
 * grouped by `role=` tag when the hostfile has tags; filterable to the unhealthy ones and sortable
 * by name, status or failure rate — what a thousand endpoints need. It reads the connection's one
 * health model and redraws when that moves or a run counts requests.
 */
export class EndpointTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private connection: SwarmConnection | undefined;
  private subscription: vscode.Disposable | undefined;
  private readonly runsSubscription: vscode.Disposable;
  private readonly jobsSubscription: vscode.Disposable;
  private readonly countsChanged: Throttled;
  private unhealthyOnly = false;
  private order: EndpointSort = 'hostfile';

  constructor(
    runs: RunTracker,
    private readonly jobs: JobWatch,
  ) {
    this.jobsSubscription = jobs.onDidChange(() => this.changed.fire(undefined));
    // Failure counts grow during a run without a status change: redrawn once a second at most (status changes at once).
    this.countsChanged = throttle(() => this.changed.fire(undefined), 1000);
    this.runsSubscription = runs.onDidChange(() => this.connection && this.countsChanged.call());
    void vscode.commands.executeCommand('setContext', FILTER_KEY, false);
  }

  show(connection: SwarmConnection | undefined): void {
    this.subscription?.dispose();
    this.connection = connection;
    this.subscription = connection?.onDidChange(() => this.changed.fire(undefined));
    this.changed.fire(undefined);
  }

  /** The view title's filter toggle: only endpoints that are not healthy, or all again. */
  showUnhealthyOnly(on: boolean): void {
    this.unhealthyOnly = on;
    void vscode.commands.executeCommand('setContext', FILTER_KEY, on);
    this.changed.fire(undefined);
  }

  sortBy(order: EndpointSort): void {
    this.order = order;
    this.changed.fire(undefined);
  }

  get sort(): EndpointSort {
    return this.order;
  }

  /** What the view shows now, rows flattened in order (tests read it through the extension's API). */
  get rows(): Array<{ label: string; description: string }> {
    const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...(n.kind === 'group' ? flat(this.getChildren(n)) : [])]);
    return flat(this.getChildren()).map((n) => {
      const item = this.getTreeItem(n);
      return { label: String(item.label), description: String(item.description ?? '') };
    });
  }

  getChildren(node?: Node): Node[] {
    if (node?.kind === 'group') return node.members.map((view) => ({ kind: 'endpoint', view }));
    if (node) return [];
    // The launched job heads the view, also while it is queued and nothing is connected yet.
    const job: Node[] = this.jobs.job ? [{ kind: 'job', job: this.jobs.job }] : [];
    if (!this.connection) return job;
    const all = this.connection.snapshot;
    const views = sorted(this.unhealthyOnly ? all.filter((v) => v.status !== 'up') : all, this.order);
    const summary: Node = { kind: 'summary', ...summarize(all, this.unhealthyOnly ? views.length : null) };
    const roles = [...new Set(views.map((v) => v.endpoint.tags.role).filter((r): r is string => Boolean(r)))];
    if (!roles.length) return [...job, summary, ...views.map((view): Node => ({ kind: 'endpoint', view }))];
    const groups: Node[] = roles.map((role) => ({ kind: 'group', role, members: views.filter((v) => v.endpoint.tags.role === role) }));
    const untagged = views.filter((v) => !v.endpoint.tags.role);
    if (untagged.length) groups.push({ kind: 'group', role: '(no role)', members: untagged });
    return [...job, summary, ...groups];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'job') return jobItem(node.job, this.jobs);
    if (node.kind === 'summary') {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.id = 'summary';
      item.iconPath = new vscode.ThemeIcon('pulse');
      item.tooltip = node.tooltip;
      if (node.filter) item.description = node.filter;
      item.contextValue = 'summary';
      return item;
    }
    if (node.kind === 'group') {
      const healthy = node.members.filter((m) => m.status === 'up').length;
      const item = new vscode.TreeItem(`role=${node.role}`, vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${healthy}/${node.members.length} healthy`;
      item.contextValue = 'group';
      item.id = `group:${node.role}`;
      return item;
    }
    const v = node.view;
    const item = new vscode.TreeItem(v.id, vscode.TreeItemCollapsibleState.None);
    item.id = `endpoint:${v.id}`;
    const [icon, color] = ICONS[v.status];
    item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));
    item.description = describe(v);
    item.contextValue = v.status === 'excluded' ? 'endpoint.excluded' : 'endpoint';
    return item;
  }

  /** Tooltips are built on hover only: a thousand rows need not make a thousand of them per redraw. */
  resolveTreeItem(item: vscode.TreeItem, node: Node): vscode.TreeItem {
    if (node.kind === 'endpoint') item.tooltip = tooltip(node.view);
    return item;
  }

  dispose(): void {
    this.subscription?.dispose();
    this.runsSubscription.dispose();
    this.jobsSubscription.dispose();
    this.countsChanged.cancel();
    this.changed.dispose();
  }
}

const JOB_ICONS: Record<string, [string, string]> = {
  queued: ['watch', 'charts.yellow'],
  held: ['debug-pause', 'charts.yellow'],
  starting: ['loading~spin', 'charts.yellow'],
  running: ['server-process', 'testing.iconPassed'],
  ending: ['loading~spin', 'charts.yellow'],
};

/** The job row: `job 12 running · 4 min 10 s left`, its nodes and servers after, the scheduler's whole word on hover. */
function jobItem(job: WatchedJob, jobs: JobWatch): vscode.TreeItem {
  const phase = job.state?.phase;
  const item = new vscode.TreeItem(jobPhrase(job, jobs.walltimeLeft()), vscode.TreeItemCollapsibleState.None);
  item.id = `job:${job.record.id}`;
  const [icon, color] = (phase && JOB_ICONS[phase]) ?? (phase && isFinished(phase) ? ['circle-slash', 'disabledForeground'] : ['cloud-upload', 'charts.blue']);
  item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));
  const nodes = job.state?.nodes ?? [];
  item.description = [job.record.scheduler, nodes.length ? (nodes.length > 2 ? `${nodes.length} nodes` : nodes.join(', ')) : `${job.record.nodes} node(s) asked`, `${job.record.nodes * job.record.serversPerNode} ${job.record.engine} server(s)`].join(' · ');
  item.tooltip = [
    `Job ${job.record.id} (${job.record.name}) on ${job.record.scheduler}${job.record.via ? ` through ${job.record.via}` : ''}`,
    job.state ? describeJob(job.state) : 'submitted; no state yet',
    job.error ? `Last look failed: ${job.error}` : '',
    `Template: ${job.record.template}`,
    `Script: ${job.record.scriptPath}`,
    `Hostfile: ${job.record.hostfile}`,
  ]
    .filter(Boolean)
    .join('\n');
  item.contextValue = jobs.live ? 'job.live' : 'job.ended';
  return item;
}

/** `18 healthy · 1 degraded · 1 down` (statuses with none left out; healthy, degraded and down always said). */
function summarize(views: readonly EndpointView[], shown: number | null): { text: string; filter: string | null; tooltip: string } {
  const counts = new Map<EndpointStatus, number>();
  for (const v of views) counts.set(v.status, (counts.get(v.status) ?? 0) + 1);
  const always = new Set<EndpointStatus>(['up', 'degraded', 'down']);
  const parts = [...STATUS_ORDER].reverse().filter((s) => always.has(s) || counts.get(s)).map((s) => `${counts.get(s) ?? 0} ${STATUS_LABELS[s]}`);
  const text = parts.join(' · ');
  const filter = shown === null ? null : `showing ${shown} not healthy`;
  const lines = [`${views.length} endpoints: ${text}`];
  if (filter) lines.push(`Filter on: ${filter}.`);
  return { text, filter, tooltip: lines.join('\n') };
}

function sorted(views: readonly EndpointView[], order: EndpointSort): EndpointView[] {
  const byName = (a: EndpointView, b: EndpointView) => naturalOrder(a.id, b.id);
  const rank = (v: EndpointView) => STATUS_ORDER.indexOf(v.status);
  const rate = (v: EndpointView) => failureRate(v) ?? -1;
  switch (order) {
    case 'hostfile':
      return [...views];
    case 'name':
      return [...views].sort(byName);
    case 'status':
      return [...views].sort((a, b) => rank(a) - rank(b) || byName(a, b));
    case 'failure-rate':
      return [...views].sort((a, b) => rate(b) - rate(a) || byName(a, b));
  }
}

const percent = (rate: number) => `${(rate * 100).toFixed(rate > 0 && rate < 0.1 ? 1 : 0)} %`;

/** Most telling first, as the sidebar cuts the end off: status, failures, live load (when busy), model, context, latency. */
function describe(v: EndpointView): string {
  const parts = [STATUS_LABELS[v.status]];
  const rate = failureRate(v);
  if (v.failures && rate !== null) parts.push(`${percent(rate)} failed`);
  if (v.outrun) parts.push(`${v.outrun} answered elsewhere first`);
  if (v.load && v.load.running + v.load.waiting > 0) parts.push(`${v.load.running} run · ${v.load.waiting} wait`);
  if (v.model) parts.push(v.model);
  if (v.maxModelLen) parts.push(`${Math.round(v.maxModelLen / 1024)}k`);
  if (v.latencyMs !== null && v.status === 'up') parts.push(`${v.latencyMs.toFixed(0)} ms`);
  return parts.join(' · ');
}

function tooltip(v: EndpointView): vscode.MarkdownString {
  const md = new vscode.MarkdownString(undefined, true);
  md.appendMarkdown(`**${v.id}** — ${v.status === 'excluded' ? 'excluded from runs' : STATUS_LABELS[v.status]}\n\n`);
  const rate = failureRate(v);
  const rows: Array<[string, string | null]> = [
    ['model', v.model],
    ['max context', v.maxModelLen?.toLocaleString('en-US') ?? null],
    ['latency', v.latencyMs === null ? null : `${v.latencyMs.toFixed(1)} ms`],
    ['requests', rate === null ? null : `${v.answered.toLocaleString('en-US')} answered, ${v.failures.toLocaleString('en-US')} failed (${percent(rate)})${v.outrun ? `, ${v.outrun.toLocaleString('en-US')} answered elsewhere first (a hedge was faster)` : ''}`],
    ['in flight', v.load ? `${v.load.running} running, ${v.load.waiting} waiting` : null],
    ['KV cache', v.load?.kvCacheUsage === null || !v.load ? null : `${(v.load.kvCacheUsage * 100).toFixed(0)} %`],
    ['tags', Object.entries(v.endpoint.tags).map(([k, val]) => `${k}=${val}`).join(' ') || null],
    ['reached via', v.via],
    ['error', v.error],
  ];
  for (const [k, val] of rows) {
    if (!val) continue;
    md.appendText(`${k}: ${val}`);
    md.appendMarkdown('  \n');
  }
  return md;
}

import * as vscode from 'vscode';
import type { EndpointStatus, EndpointView, SwarmConnection } from './connection.ts';

type Node = { kind: 'group'; role: string; members: EndpointView[] } | { kind: 'endpoint'; view: EndpointView };

const ICONS: Record<EndpointStatus, [string, string]> = {
  healthy: ['pass-filled', 'testing.iconPassed'],
  booting: ['loading~spin', 'charts.yellow'],
  unhealthy: ['warning', 'list.warningForeground'],
  down: ['error', 'testing.iconFailed'],
  'tunnel-down': ['debug-disconnect', 'testing.iconFailed'],
  unknown: ['circle-large-outline', 'disabledForeground'],
};

const LABELS: Record<EndpointStatus, string> = {
  healthy: 'healthy',
  booting: 'booting',
  unhealthy: 'unhealthy',
  down: 'down',
  'tunnel-down': 'tunnel down',
  unknown: 'checking…',
};

/** The Endpoints view: a row per endpoint, grouped by `role=` tag when the hostfile has tags. */
export class EndpointTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private connection: SwarmConnection | undefined;
  private subscription: vscode.Disposable | undefined;

  show(connection: SwarmConnection | undefined): void {
    this.subscription?.dispose();
    this.connection = connection;
    this.subscription = connection?.onDidChange(() => this.changed.fire(undefined));
    this.changed.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    if (node?.kind === 'group') return node.members.map((view) => ({ kind: 'endpoint', view }));
    if (node || !this.connection) return [];
    const views = this.connection.snapshot;
    const roles = [...new Set(views.map((v) => v.endpoint.tags.role).filter((r): r is string => Boolean(r)))];
    if (!roles.length) return views.map((view) => ({ kind: 'endpoint', view }));
    const groups: Node[] = roles.map((role) => ({ kind: 'group', role, members: views.filter((v) => v.endpoint.tags.role === role) }));
    const untagged = views.filter((v) => !v.endpoint.tags.role);
    if (untagged.length) groups.push({ kind: 'group', role: '(no role)', members: untagged });
    return groups;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'group') {
      const healthy = node.members.filter((m) => m.status === 'healthy').length;
      const item = new vscode.TreeItem(`role=${node.role}`, vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${healthy}/${node.members.length} healthy`;
      item.contextValue = 'group';
      item.id = `group:${node.role}`;
      return item;
    }
    const v = node.view;
    const item = new vscode.TreeItem(v.id, vscode.TreeItemCollapsibleState.None);
    item.id = `endpoint:${v.id}`;
    const [icon, color] = v.excluded ? ['circle-slash', 'disabledForeground'] : ICONS[v.status];
    item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));
    item.description = describe(v);
    item.tooltip = tooltip(v);
    item.contextValue = v.excluded ? 'endpoint.excluded' : 'endpoint';
    return item;
  }

  dispose(): void {
    this.subscription?.dispose();
    this.changed.dispose();
  }
}

/** Most telling first, as the sidebar cuts the end off: status, live load (when busy), model, context, latency. */
function describe(v: EndpointView): string {
  const parts = [v.excluded ? 'excluded' : LABELS[v.status]];
  if (v.load && v.load.running + v.load.waiting > 0) parts.push(`${v.load.running} run · ${v.load.waiting} wait`);
  if (v.model) parts.push(v.model);
  if (v.maxModelLen) parts.push(`${Math.round(v.maxModelLen / 1024)}k`);
  if (v.latencyMs !== null && v.status === 'healthy') parts.push(`${v.latencyMs.toFixed(0)} ms`);
  return parts.join(' · ');
}

function tooltip(v: EndpointView): vscode.MarkdownString {
  const md = new vscode.MarkdownString(undefined, true);
  md.appendMarkdown(`**${v.id}** — ${v.excluded ? 'excluded from runs' : LABELS[v.status]}\n\n`);
  const rows: Array<[string, string | null]> = [
    ['model', v.model],
    ['max context', v.maxModelLen?.toLocaleString('en-US') ?? null],
    ['latency', v.latencyMs === null ? null : `${v.latencyMs.toFixed(1)} ms`],
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

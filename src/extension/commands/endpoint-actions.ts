import * as vscode from 'vscode';
import { originOf } from '../../core/endpoints/endpoint.ts';
import type { EndpointView } from '../connection.ts';
import type { Services } from '../services.ts';

/** Tree rows hand their view to these; the palette hides them (they need a row). */
type Row = { view: EndpointView } | undefined;

export async function copyUrl(row: Row): Promise<void> {
  if (!row) return;
  // The base URL an OpenAI client takes: a service's own, a server's /v1.
  const url = row.view.endpoint.url ?? `${originOf(row.view.endpoint)}/v1`;
  await vscode.env.clipboard.writeText(url);
  void vscode.window.setStatusBarMessage(`Copied ${url}`, 3000);
}

/** Fetches `/metrics` over the endpoint's own route (a tunnel, perhaps) and shows it as text. */
export async function openMetrics(services: Services, row: Row): Promise<void> {
  const connection = services.session.connection;
  if (!row || !connection) return;
  const slot = connection.endpoints.findIndex((e) => e === row.view.endpoint);
  try {
    const res = await connection.swarm.get(slot, '/metrics', connection.swarm.options.lookupTimeoutMs);
    const doc = await vscode.workspace.openTextDocument({ content: res.status === 200 ? res.body : `HTTP ${res.status}\n\n${res.body}`, language: 'plaintext' });
    await vscode.window.showTextDocument(doc, { preview: true });
  } catch (err) {
    void vscode.window.showErrorMessage(`Swarm: ${row.view.id}/metrics: ${(err as Error).message}`);
  }
}

export function toggleExclude(services: Services, row: Row): void {
  if (row) services.session.connection?.toggleExclude(row.view.id);
}

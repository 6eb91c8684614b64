import * as vscode from 'vscode';
import type { Endpoint } from '../core/endpoints/endpoint.ts';
import { hostfileFromText, HostfileError } from '../core/hostfile/index.ts';
import { hostfileGlobs, settings } from './settings.ts';

/** The workspace's hostfiles, for the palette's quick pick and the explorer menu's `when` clause. */
export async function findHostfiles(): Promise<vscode.Uri[]> {
  const globs = hostfileGlobs(settings());
  const found = await Promise.all(globs.map((g) => vscode.workspace.findFiles(g, '**/node_modules/**', 200)));
  const unique = new Map(found.flat().map((u) => [u.toString(), u]));
  return [...unique.values()].sort((a, b) => a.fsPath.localeCompare(b.fsPath));
}

/** Keeps `swarmLab.hostfiles` (paths matching the user's extra patterns) current for the explorer menu. */
export async function publishHostfileContext(): Promise<void> {
  const files = await findHostfiles();
  await vscode.commands.executeCommand('setContext', 'swarmLab.hostfiles', files.map((u) => u.fsPath));
}

/** Reads and checks a hostfile; a bad one throws with every `FILE:LINE: message`. */
export async function readHostfile(uri: vscode.Uri): Promise<{ endpoints: Endpoint[]; warnings: string[] }> {
  const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  const { endpoints, warnings } = hostfileFromText(text, vscode.workspace.asRelativePath(uri));
  return { endpoints, warnings: warnings.map(String) };
}

/** A bad hostfile's problems, shown where people look: a notification with the first ones, the log with all. */
export function reportHostfileError(err: unknown, log: vscode.LogOutputChannel): void {
  if (!(err instanceof HostfileError)) throw err;
  for (const issue of err.issues) log.error(String(issue));
  const first = err.issues.slice(0, 3).map(String).join('; ');
  const more = err.issues.length > 3 ? ` (+${err.issues.length - 3} more)` : '';
  void vscode.window.showErrorMessage(`Swarm: bad hostfile: ${first}${more}`, 'Show All').then((pick) => pick && log.show());
}

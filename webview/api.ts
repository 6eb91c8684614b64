/**
 * The webview's side of the protocol (src/panel/protocol.ts): `acquireVsCodeApi()` once, typed
 * posts, requests that resolve on their `reply`, and the state VS Code keeps across reloads.
 */
import type { HostMessage, PanelMessage, RequestMethod, Requests } from '../src/panel/protocol.ts';

const vscode = acquireVsCodeApi<unknown>();

export function post(message: PanelMessage): void {
  vscode.postMessage(message);
}

let nextRequestId = 1;
const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

export function request<M extends RequestMethod>(method: M, params: Requests[M]['params']): Promise<Requests[M]['result']> {
  const requestId = nextRequestId++;
  return new Promise((resolve, reject) => {
    pending.set(requestId, { resolve: resolve as (v: unknown) => void, reject });
    post({ type: 'request', requestId, method, params } as PanelMessage);
  });
}

/** Settles the request a reply answers; false if the message is not a reply. */
export function settleReply(message: HostMessage): boolean {
  if (message.type !== 'reply') return false;
  const waiting = pending.get(message.requestId);
  if (waiting) {
    pending.delete(message.requestId);
    if (message.ok) waiting.resolve(message.value ?? null);
    else waiting.reject(new Error(message.error ?? 'the extension could not do that'));
  }
  return true;
}

export function isHostMessage(value: unknown): value is HostMessage {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

export const loadState = (): unknown => vscode.getState();
export const saveState = (state: unknown): void => {
  vscode.setState(state);
};

import type { HostMessage, PanelMessage, RequestMethod, Requests } from '../../panel/protocol.ts';
import { validatePanelMessage } from './message-validation.ts';

/** What the host does for each message the webview may post. */
export interface PanelHandlers {
  ready(): void | Promise<void>;
  cancel(): void | Promise<void>;
  drain(): void | Promise<void>;
  progressSeen(runId: string, seq: number): void;
  requests: { [M in RequestMethod]: (params: Requests[M]['params']) => Promise<Requests[M]['result']> };
}

/**
 * Routes the webview's messages to the handlers, typed by the protocol: every message is validated
 * first (an invalid one is logged and dropped, an invalid request is answered with an error), and
 * every request gets exactly one `reply`, whether its handler returns or throws.
 */
export class MessageRouter {
  constructor(
    private readonly handlers: PanelHandlers,
    private readonly post: (message: HostMessage) => void,
    private readonly warn: (message: string) => void,
  ) {}

  /** Handles one message; resolves once it is handled (a request: once its reply is posted). */
  async receive(value: unknown): Promise<void> {
    const checked = validatePanelMessage(value);
    if (!checked.ok) {
      this.warn(`panel: refused a message: ${checked.error}`);
      if (checked.requestId !== undefined) this.post({ type: 'reply', requestId: checked.requestId, ok: false, error: checked.error });
      return;
    }
    const message: PanelMessage = checked.message;
    switch (message.type) {
      case 'ready':
        return this.handlers.ready();
      case 'cancel':
        return this.handlers.cancel();
      case 'drain':
        return this.handlers.drain();
      case 'progressSeen':
        return this.handlers.progressSeen(message.runId, message.seq);
      case 'request':
        return this.answer(message.requestId, () => (this.handlers.requests[message.method] as (p: unknown) => Promise<unknown>)(message.params));
    }
  }

  private async answer(requestId: number, handle: () => Promise<unknown>): Promise<void> {
    let reply: HostMessage;
    try {
      const value = await handle();
      reply = { type: 'reply', requestId, ok: true, value: value ?? null };
    } catch (err) {
      reply = { type: 'reply', requestId, ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    this.post(reply);
  }
}

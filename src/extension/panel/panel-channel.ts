import type * as vscode from 'vscode';
import type { HostMessage } from '../../panel/protocol.ts';

/**
 * The host's side of the wire to one webview: posts nothing before the webview said `ready` (as the
 * GitHub PR extension does), and treats a hidden panel as gone, since without
 * retainContextWhenHidden its page is torn down and says `ready` again when shown. What could not be
 * delivered is not queued: on `ready` the host sends `init` and the state of the moment instead,
 * (a live run is resynced from its start), except one `showRun` (a finished run the webview missed
 * that a command brings forward), kept until then.
 */
export class PanelChannel {
  private ready = false;
  private pendingShow: Extract<HostMessage, { type: 'showRun' }> | undefined;

  constructor(
    private readonly webview: vscode.Webview,
    private readonly log: (message: HostMessage) => void,
  ) {}

  get isReady(): boolean {
    return this.ready;
  }

  /** The webview said `ready`: from now on messages go through. Returns the `showRun` kept for it, if any. */
  markReady(): Extract<HostMessage, { type: 'showRun' }> | undefined {
    this.ready = true;
    const show = this.pendingShow;
    this.pendingShow = undefined;
    return show;
  }

  /** The page went away (hidden or reloading): hold everything until it says `ready` again. */
  markGone(): void {
    this.ready = false;
  }

  /** Posts when the webview is ready; otherwise drops the message (a `showRun` is kept for `ready`). Says whether it went. */
  post(message: HostMessage): boolean {
    if (!this.ready) {
      if (message.type === 'showRun') this.pendingShow = message;
      return false;
    }
    this.log(message);
    void this.webview.postMessage(message);
    return true;
  }
}

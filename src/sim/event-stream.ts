import type { ServerResponse } from 'node:http';

/** Mid-stream faults, read at every event so that faults set at runtime reach streams already open. */
export interface StreamFaults {
  /** After this many events the stream goes silent but stays open. */
  stallAfterChunks?: number;
  /** After this many events the connection is destroyed, as if the server died mid-answer. */
  dropAfterChunks?: number;
}

/**
 * One server-sent-events response. Events written in the same tick (an engine step serving many
 * sequences of one request) leave in one socket write.
 */
export class EventStream {
  private events = 0;
  private corked = false;
  private dropped = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly faults: StreamFaults,
  ) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    // Clients see the stream start before the first token, as with vLLM's StreamingResponse.
    res.flushHeaders();
  }

  send(data: unknown): void {
    if (!this.open()) return;
    this.events++;
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(() => {
        this.corked = false;
        this.res.uncork();
      });
    }
    this.res.write(`data: ${JSON.stringify(data)}\n\n`);
    if (this.events >= (this.faults.dropAfterChunks ?? Infinity) && this.res.socket) {
      this.dropped = true;
      const { socket } = this.res;
      this.res.uncork();
      // The written events reach the client, then the connection closes mid-body; 'close' frees the slots.
      socket.end(() => socket.destroy());
    }
  }

  end(): void {
    if (this.open()) this.res.end('data: [DONE]\n\n');
  }

  private open(): boolean {
    const { stallAfterChunks } = this.faults;
    return !this.dropped && !this.res.destroyed && !(stallAfterChunks !== undefined && this.events >= stallAfterChunks);
  }
}

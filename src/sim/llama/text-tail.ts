import type { LlamaModel, Token } from 'node-llama-cpp';

/**
 * A sequence's text as a client reads it, grown token by token: specials left out, cut before the
 * first stop string, and handed out only once final (an incomplete UTF-8 character, or text that may
 * still become a stop string, is held back), as vLLM's incremental detokenizer does.
 */
export class TextTail {
  text = '';
  stopped = false;
  stopReason: string | null = null;
  private readonly tokens: Token[] = [];
  private readonly holdBack: number;
  private sent = 0;

  constructor(
    private readonly model: LlamaModel,
    private readonly stops: readonly string[],
  ) {
    this.holdBack = Math.max(0, ...stops.map((s) => s.length - 1));
  }

  /** Adds a token; returns the text that became final with it ('' if none). */
  push(token: Token): string {
    this.tokens.push(token);
    const text = this.model.detokenize(this.tokens);
    const from = Math.max(0, this.sent - this.holdBack);
    let cut = -1;
    for (const stop of this.stops) {
      const at = text.indexOf(stop, from);
      if (at >= 0 && (cut < 0 || at < cut)) {
        cut = at;
        this.stopReason = stop;
      }
    }
    if (cut >= 0) {
      this.stopped = true;
      this.text = text.slice(0, cut);
      return '';
    }
    this.text = text;
    let end = text.length - this.holdBack;
    while (end > this.sent && text.charCodeAt(end - 1) === 0xfffd) end--;
    if (end <= this.sent) return '';
    const piece = text.slice(this.sent, end);
    this.sent = end;
    return piece;
  }
}

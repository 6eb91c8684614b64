/**
 * OpenAI's harmony format (gpt-oss): a raw completion after the rendered `<|start|>assistant` reads
 * `<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…`. The
 * server's chat endpoint splits it into reasoning (analysis) and content (final); this does the
 * same on text. It needs the special tokens in the text (`skip_special_tokens: false`): with them
 * stripped, channel names run into the prose and cannot be told apart reliably, so no parse.
 * Tool calls (`commentary` with a recipient) are not parsed into `tool_calls`; they count as neither.
 */
export interface HarmonyAnswer {
  /** The final channel's text; null when the model never reached it (cut off by max_tokens). */
  text: string | null;
  reasoning: string | null;
}

const MESSAGE = /(?:<\|start\|>[^<]*)?<\|channel\|>([^<]*)<\|message\|>([^]*?)(?:<\|end\|>|<\|return\|>|<\|call\|>|(?=<\|start\|>)|$)/g;

/** Null when the text holds no harmony messages (the model is not speaking harmony). */
export function parseHarmony(raw: string): HarmonyAnswer | null {
  const analysis: string[] = [];
  let final: string | null = null;
  let found = false;
  for (const [, channel, content] of raw.matchAll(MESSAGE)) {
    found = true;
    const name = channel!.trim().split(/\s/)[0];
    if (name === 'analysis') analysis.push(content!);
    else if (name === 'final') final = (final ?? '') + content!;
  }
  if (!found) return null;
  return { text: final, reasoning: analysis.length ? analysis.join('\n') : null };
}

/** A rendered prompt that opens an assistant turn in harmony. */
export function speaksHarmony(rendered: string): boolean {
  return rendered.includes('<|start|>assistant');
}

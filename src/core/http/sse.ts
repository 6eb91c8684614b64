/**
 * Server-sent events as vLLM writes them: `data: <json>` lines, events separated by a blank line,
 * ending with `data: [DONE]`. Calls `onData` with each event's data (multi-line data joined with
 * `\n`) and the time (`performance.now()`) the chunk that completed it was read: events read
 * together arrived together, however long parsing the ones before them took. Resolves true at
 * `[DONE]`, false when the body ends without it (the server went away). Bytes are decoded as a
 * stream, so a character split across chunks survives.
 */
export async function readEvents(body: AsyncIterable<Buffer | Uint8Array | string>, onData: (data: string, at: number) => void): Promise<boolean> {
  const decoder = new TextDecoder();
  let pending = '';
  let data: string[] = [];
  let at = 0;
  for await (const chunk of body) {
    at = performance.now();
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n', start)) {
      const line = pending.charCodeAt(nl - 1) === 13 ? pending.slice(start, nl - 1) : pending.slice(start, nl);
      start = nl + 1;
      if (line === '') {
        if (data.length) {
          const joined = data.length === 1 ? data[0]! : data.join('\n');
          data = [];
          if (joined === '[DONE]') return true;
          onData(joined, at);
        }
      } else if (line.startsWith('data:')) {
        data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
      }
      // Comments (`:`), `event:`, `id:` and `retry:` lines carry nothing vLLM uses.
    }
    pending = pending.slice(start);
  }
  if (data.length) {
    if (data.join('\n') === '[DONE]') return true;
    onData(data.join('\n'), at);
  }
  return false;
}

import { readEvents } from '../../src/core/http/sse.ts';

/** How an events list ends when its stream said `data: [DONE]`. */
export const DONE = '[DONE]';

/** Thrown from the reader's callback to stop reading: the caller wanted no more. */
const ENOUGH = Symbol('enough');

/**
 * A response's server-sent events read through the core's one reader (the one the client streams
 * with), each event's JSON parsed, and `DONE` last when the stream ended with it. `onEvent` is told
 * of each event with the time its chunk was read (`performance.now()`) and may stop the reading by
 * returning true (the caller then lets the request go). Throws what broke the stream.
 */
export async function sseEvents(body: AsyncIterable<Buffer | Uint8Array | string> | string, onEvent?: (events: any[], at: number) => boolean | void): Promise<any[]> {
  const events: any[] = [];
  const chunks = typeof body === 'string' ? (async function* () { yield body; })() : body;
  try {
    const done = await readEvents(chunks, (data, at) => {
      events.push(JSON.parse(data));
      if (onEvent?.(events, at)) throw ENOUGH;
    });
    if (done) events.push(DONE);
  } catch (err) {
    if (err !== ENOUGH) throw err;
  }
  return events;
}

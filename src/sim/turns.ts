/**
 * Takes turns at the event loop: each waiter runs in a loop iteration of its own, in arrival order.
 *
 * One simulator process plays hundreds of servers. Answering a request is the heavy part (a list of
 * 100 prompts: ~2 ms to generate and serialize); run as each body comes in, the requests behind it
 * wait unread in their sockets, and their arrival, from which their modeled time counts, is noted
 * late. A turn per iteration lets the poll phase in between note every arrival on time.
 */
const waiting: Array<() => void> = [];

export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    if (waiting.push(resolve) === 1) setImmediate(takeTurn);
  });
}

function takeTurn(): void {
  waiting.shift()!();
  // Queued from inside the check phase, it runs in the next iteration, after a poll.
  if (waiting.length) setImmediate(takeTurn);
}

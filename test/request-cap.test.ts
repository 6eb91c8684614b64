import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requestCap } from '../src/core/pool/request-cap.ts';

/** A piece of work the test finishes by hand. */
function pending() {
  let finish!: (ok: boolean) => void;
  const promise = new Promise<string>((resolve, reject) => (finish = (ok) => (ok ? resolve('done') : reject(new Error('failed')))));
  return { promise, finish };
}

describe('request cap', () => {
  it('runs at most `concurrency` at once, the rest in the order they came; a failure frees its place too', async () => {
    const cap = requestCap(2);
    const works = Array.from({ length: 5 }, () => pending());
    const started: number[] = [];
    const outcomes = works.map((w, i) => cap(() => (started.push(i), w.promise)).then(String, (err: Error) => err.message));
    assert.deepEqual(started, [0, 1], 'under the cap, work starts at once');
    works[1]!.finish(false);
    await outcomes[1];
    assert.deepEqual(started, [0, 1, 2], 'a failed one makes room for the next in line');
    works[0]!.finish(true);
    await outcomes[0];
    assert.deepEqual(started, [0, 1, 2, 3]);
    works[3]!.finish(true);
    works[2]!.finish(true);
    await Promise.all([outcomes[2], outcomes[3]]);
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
    works[4]!.finish(true);
    assert.deepEqual(await Promise.all(outcomes), ['done', 'failed', 'done', 'done', 'done'], 'each caller gets its own work’s outcome');
  });

  it('work that throws at once rejects its caller and keeps no place', async () => {
    const cap = requestCap(1);
    await assert.rejects(
      cap(() => {
        throw new Error('at once');
      }),
      /at once/,
    );
    assert.equal(await cap(async () => 'next'), 'next', 'the place it took is free again');
  });
});

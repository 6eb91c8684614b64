/**
 * The client's self-check: CPU per request and the event loop's busy share, and the warning that the
 * client bounded a run. A client that computes the whole time is bound; one that waits on the network
 * (here a timer, as an answer would be) is not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientOverheadLines, measureClient } from '../src/core/index.ts';

describe('client overhead', () => {
  it('a client that only computes bounded the run: its event loop was busy throughout, and the summary warns', () => {
    const client = measureClient();
    const start = process.cpuUsage();
    while (process.cpuUsage(start).user < 150_000); // 150 ms of this thread's CPU, never yielding
    const c = client.finish(10);
    assert.ok(c.cpuMs >= 150, `${c.cpuMs} ms CPU`);
    assert.equal(c.cpuPerRequestMs, c.cpuMs / 10);
    assert.ok(c.eventLoopBusy >= 0.9 && c.clientBound, JSON.stringify(c));
    const lines = clientOverheadLines(c);
    assert.match(lines[0]!, /^client: [\d.]+ ms CPU per request \([\d,]+ ms over 10 requests\), event loop \d+ % busy$/);
    assert.match(lines[1]!, /^warning: the client's event loop was busy \d+ % of the run: the client, not the servers, bounded it/);
  });

  it('a client that waits is not bound: no warning', async () => {
    // The runner's own work for the test before (its report) is done first: on a loaded machine its
    // few ms of CPU took the whole wait's wall time once, which the loop counts as busy, as it should.
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    const client = measureClient();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const c = client.finish(0);
    assert.equal(c.cpuPerRequestMs, 0, 'no requests: no share');
    assert.ok(c.eventLoopBusy < 0.9 && !c.clientBound, JSON.stringify(c));
    assert.equal(clientOverheadLines(c).length, 1);
  });
});

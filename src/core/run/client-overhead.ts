import { performance } from 'node:perf_hooks';

/**
 * The client's own cost over a run, so a run can say whether it measured the servers or itself: the
 * process's CPU per request, and how busy its event loop was. Every response is parsed on that one
 * thread; near 100 % busy, answers wait for the client, not for the servers.
 */
export interface ClientOverhead {
  /** CPU of this process (every thread: parsing, TLS, garbage collection), ms. */
  cpuMs: number;
  requests: number;
  cpuPerRequestMs: number;
  /** Share of the run's wall time the event loop was busy (0..1). */
  eventLoopBusy: number;
  /** The event loop was busy nearly all the time: the client bounded the run. */
  clientBound: boolean;
}

/** Above this share of busy event loop, the client is what the run measured. */
export const CLIENT_BOUND_BUSY = 0.9;

/** Starts measuring now; `finish` says what the client spent since, over `requests` requests. */
export function measureClient(): { finish(requests: number): ClientOverhead } {
  const cpu = process.cpuUsage();
  const loop = performance.eventLoopUtilization();
  return {
    finish(requests) {
      const used = process.cpuUsage(cpu);
      const cpuMs = (used.user + used.system) / 1000;
      const eventLoopBusy = performance.eventLoopUtilization(loop).utilization;
      return { cpuMs, requests, cpuPerRequestMs: requests ? cpuMs / requests : 0, eventLoopBusy, clientBound: eventLoopBusy >= CLIENT_BOUND_BUSY };
    },
  };
}

/** One line for a summary, and a warning line when the client bounded the run. */
export function clientOverheadLines(c: ClientOverhead): string[] {
  const lines = [`client: ${c.cpuPerRequestMs.toFixed(c.cpuPerRequestMs < 1 ? 3 : 2)} ms CPU per request (${Math.round(c.cpuMs).toLocaleString('en-US')} ms over ${c.requests.toLocaleString('en-US')} requests), event loop ${(c.eventLoopBusy * 100).toFixed(0)} % busy`];
  if (c.clientBound) lines.push(`warning: the client's event loop was busy ${(c.eventLoopBusy * 100).toFixed(0)} % of the run: the client, not the servers, bounded it (fewer requests in flight per client, batched requests, or the run split over several clients)`);
  return lines;
}

import { setTimeout as sleep } from 'node:timers/promises';
import { dispatchIndividual } from '../dispatch/dispatcher.ts';
import type { Plan } from '../dispatch/dispatch-plan.ts';
import type { Slo } from '../run/goodput.ts';
import { makePlan, type RunOptions } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { PromptInput } from '../run/result.ts';
import { Run } from '../run/run.ts';

/** One request of a load run: its prompt, and the output length it is held to (max_tokens with ignore_eos), if any. */
export interface LoadRequest {
  prompt: PromptInput;
  outputTokens?: number;
}

export interface LoadOptions extends RunOptions {
  /** New requests start for this long; the run ends when the last of them is answered (vLLM bench's duration counts that tail too). */
  durationMs: number;
  /**
   * Open loop: the gap before the next arrival, ms (arrivals.ts), the pool's concurrency capping what is in
   * flight as `--max-concurrency` does. Unset: a closed loop of `users` clients, each sending its next
   * request when its last is answered.
   */
  nextGapMs?: () => number;
  users?: number;
  /** The i-th request to send. */
  next(i: number): LoadRequest;
  slo?: Slo;
  keepResults?: boolean;
}

/**
 * Sustained load, as `vllm bench serve` applies it: streamed chat requests, one per prompt, arriving at a
 * rate or kept `users` in flight, for a duration; each result settles in arrival order (its index).
 * Request i starts on endpoint i mod n, as scatter's prompt i does.
 */
export function sustainedLoad(pool: SwarmPool, options: LoadOptions): Run {
  const meta = { pattern: 'sustained-load', batch: false, stream: true, keepResults: options.keepResults ?? false, ...(options.slo ? { slo: options.slo } : {}) };
  return new Run(pool, meta, async (ctx) => {
    const plan = await makePlan(pool, { ...options, stream: true }, ctx);
    const members = plan.selection.members;
    const start = performance.now();
    const stopped = () => ctx.signal.aborted || ctx.drain.aborted;
    let sent = 0;
    const send = (): Promise<unknown> => {
      const i = sent++;
      const request = options.next(i);
      const [slot] = ctx.reserve([request.prompt]);
      // Each request is a dispatch of one; its home is the i-th endpoint, the rest its failover order.
      const k = i % members.length;
      const selection = { ...plan.selection, members: k ? [...members.slice(k), ...members.slice(0, k)] : members };
      const gen = request.outputTokens === undefined ? plan.gen : { ...plan.gen, maxTokens: request.outputTokens, extra: { ...plan.gen.extra, ignore_eos: true } };
      return dispatchIndividual({ ...plan, selection, gen } satisfies Plan, [slot!]);
    };
    if (options.nextGapMs) {
      const inFlight = new Set<Promise<unknown>>();
      let at = 0;
      for (;;) {
        at += options.nextGapMs();
        if (at >= options.durationMs) break;
        const wait = at - (performance.now() - start);
        if (wait > 0) await sleep(wait, undefined, { signal: AbortSignal.any([ctx.signal, ctx.drain]) }).catch(() => undefined);
        // The schedule decides, not the clock: a request due before the end is sent even if the loop woke late.
        if (stopped()) break;
        const p = send().finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await Promise.all(inFlight);
    } else {
      const user = async () => {
        while (!stopped() && performance.now() - start < options.durationMs) await send();
      };
      await Promise.all(Array.from({ length: Math.max(1, options.users ?? pool.options.concurrency) }, user));
    }
  });
}

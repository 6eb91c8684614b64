import { Abort } from '../http/abort.ts';
import type { RequestFailure } from '../http/failure.ts';
import type { Member } from '../pool/selection.ts';
import type { SendCall, SendSink, SentTimes } from '../pool/transport.ts';
import type { Answer, Usage } from '../requests/request-shapes.ts';
import type { RunContext, Slot } from '../run/run.ts';

/** Prompts travelling together (one request's worth), with what they went through so far. */
export interface Group {
  slots: Slot[];
  /** Where they go first (round-robin); null once they are being failed over. */
  home: Member | null;
  /** Endpoints that failed them. */
  tried: Set<number>;
  /** Endpoint failures so far, and attempts on the current endpoint in a row. */
  failures: number;
  retries: number;
  refusals: number;
  firstTryAt: number;
  /** What the last endpoint that failed them said. */
  lastError: string | null;
  /** A copy of a hung request's prompts: whichever side answers first wins, the other is aborted. */
  hedge?: boolean;
}

export function newGroup(slots: Slot[], home: Member | null): Group {
  return { slots, home, tried: new Set(), failures: 0, retries: 0, refusals: 0, firstTryAt: 0, lastError: null };
}

/** Some of a group's prompts, with its history. */
export function derive(from: Group, slots: Slot[]): Group {
  return { ...from, slots, tried: new Set(from.tried) };
}

/** Splits `items` into at most `parts` contiguous parts of near-equal size. */
export function spread<T>(items: readonly T[], parts: number): T[][] {
  const k = Math.max(1, Math.min(parts, items.length));
  const size = Math.ceil(items.length / k);
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += size) out.push(items.slice(at, at + size));
  return out;
}

/** What a flight tells of its request: the dispatcher. */
export interface FlightOwner {
  readonly ctx: RunContext;
  carried(slot: Slot): void;
  note(message: string): void;
  answer(flight: Flight, i: number, answer: Answer, times: SentTimes): void;
  promptError(flight: Flight, i: number, failure: RequestFailure): void;
}

const noRelease = (): void => {};

/**
 * A group on its way: one `pool.send` in flight. It is that call's signal, tallies and sink at once
 * (prototype methods, no closures: individual mode makes one per prompt).
 */
export class Flight implements SendCall, SendSink {
  readonly signal = new Abort();
  /** `performance.now()` of the headers or the latest streamed event; a token seen yet. */
  lastActivity: number;
  tokens = false;
  gaps = 0;
  gapMs = 0;
  /** Its prompts were also sent elsewhere (a hedge). */
  hedged = false;
  /** Judged hung: it races its hedges outside the run's concurrency (see Dispatcher.free). */
  freed = false;
  /** Gives its place under the pool's request cap back before it settles. */
  release: () => void = noRelease;
  ownUsage: Usage | null = null;

  constructor(
    private readonly owner: FlightOwner,
    readonly group: Group,
    readonly member: Member,
    readonly probe: boolean,
    readonly startedAt: number,
    readonly stream: boolean,
    /** Unstreamed: the whole answer must be in by then (`performance.now()`), however its body trickles. */
    readonly deadline: number,
  ) {
    this.lastActivity = startedAt;
  }

  sent(endpoint: string, path: string): void {
    this.owner.ctx.sent(endpoint, path);
  }

  onCarried(i: number): void {
    this.owner.carried(this.group.slots[i]!);
  }

  note(message: string): void {
    this.owner.note(message);
  }

  onActivity(at: number): void {
    this.lastActivity = at;
  }

  onAnswer(i: number, answer: Answer, times: SentTimes): void {
    this.owner.answer(this, i, answer, times);
  }

  onPromptError(i: number, failure: RequestFailure): void {
    this.owner.promptError(this, i, failure);
  }

  onUsage(usage: Usage, own: boolean): void {
    this.owner.ctx.addUsage(this.member, usage);
    if (own) this.ownUsage = usage;
  }

  onGap(ms: number): void {
    this.owner.ctx.gaps.add(ms);
    this.gaps++;
    this.gapMs += ms;
  }
}

import { chunk, type Member, type Selection, type Sent, type SwarmPool } from './pool.ts';
import { RequestFailure } from './http/failure.ts';
import type { GenerationOptions } from './options.ts';
import type { Answer } from './request-shapes.ts';
import { attemptsOf } from './retry.ts';
import type { PromptResult } from './result.ts';
import { unfinished, type RunContext, type Slot } from './run.ts';

/** One run's view of the swarm: the pool, the endpoints and model picked for it, its options. */
export interface Plan {
  pool: SwarmPool;
  selection: Selection;
  gen: GenerationOptions;
  ctx: RunContext;
}

/**
 * Sends each prompt on its own `POST /v1/chat/completions`, round-robin `i % n` as Aurora-Swarm does.
 * Resolves once every slot has its result.
 */
export async function dispatchIndividual(plan: Plan, slots: readonly Slot[]): Promise<PromptResult[]> {
  const { pool, selection, gen, ctx } = plan;
  const members = selection.members;
  return Promise.all(
    slots.map((slot, i) =>
      pool.limit(() =>
        sendWithFailover(plan, [slot], members[i % members.length]!, async (member) => {
          const sent = await pool.chat(member, selection.model, slot.prompt, gen, ctx);
          return { ...sent, value: [sent.value] };
        }),
      ),
    ),
  ).then((groups) => groups.flat());
}

/**
 * Aurora-Swarm's batch prompting: prompts grouped per endpoint (`i % n`), one `POST /v1/completions`
 * with the list per group, groups above the server's prompt-list cap split into several requests.
 */
export async function dispatchBatched(plan: Plan, slots: readonly Slot[]): Promise<PromptResult[]> {
  const { pool, selection, gen, ctx } = plan;
  const members = selection.members;
  const groups = members.map(() => [] as Slot[]);
  slots.forEach((slot, i) => groups[i % members.length]!.push(slot));
  const chunks = groups.flatMap((group, m) => chunk(group, pool.options.maxPromptsPerRequest).map((part) => ({ member: members[m]!, slots: part })));
  const done = await Promise.all(
    chunks.map((chunk) =>
      pool.limit(() =>
        sendWithFailover(plan, chunk.slots, chunk.member, (member) =>
          pool.complete(member, selection.model, chunk.slots.map((s) => s.prompt), gen, ctx),
        ),
      ),
    ),
  );
  return done.flat();
}

/**
 * Sends a group of slots to one member; when that endpoint turns out to be down (refused, reset),
 * marks it so and re-sends the group to the next endpoint still up. Settles every slot exactly once.
 */
async function sendWithFailover(
  plan: Plan,
  slots: readonly Slot[],
  first: Member,
  send: (member: Member) => Promise<Sent<Array<Answer | Error>>>,
): Promise<PromptResult[]> {
  const { pool, selection, ctx } = plan;
  const tried = new Set<number>();
  let attempts = 0;
  for (let member: Member | undefined = nextUp(plan, first, tried); member; member = nextUp(plan, member, tried)) {
    if (ctx.signal.aborted) break;
    tried.add(member.slot);
    const sentMs = ctx.now();
    try {
      const sent = await send(member);
      attempts += sent.attempts;
      if (sent.usage) ctx.addUsage(member, sent.usage);
      return settleAll(slots, (slot, i) => answered(plan, slot, member!, sent, sent.value[i]!, attempts, slots.length === 1));
    } catch (err) {
      attempts += attemptsOf(err);
      const failure = err instanceof RequestFailure ? err : new RequestFailure('protocol', String(err));
      if (failure.kind === 'cancelled') break;
      const doneMs = ctx.now();
      if (failure.endpointDown) pool.markDown(member.slot, failure);
      const again = failure.endpointDown && pool.options.failover && nextUp(plan, member, tried);
      if (!again) {
        return settleAll(slots, (slot) => ({
          ...unfinished(slot, 'failed', failure.message, doneMs, member!.id, attempts),
          timings: { queuedMs: slot.queuedMs, sentMs, firstByteMs: null, doneMs },
        }));
      }
    }
  }
  const status = ctx.signal.aborted ? 'cancelled' : 'failed';
  const reason = ctx.signal.aborted ? 'cancelled' : `every endpoint serving ${selection.model} is down`;
  return settleAll(slots, (slot) => unfinished(slot, status, reason, ctx.now(), null, attempts));

  function settleAll(group: readonly Slot[], make: (slot: Slot, i: number) => PromptResult): PromptResult[] {
    return group.map((slot, i) => {
      const result = make(slot, i);
      ctx.settle(result);
      return result;
    });
  }
}

/** `from` itself if it is still usable, else the next member after it (cyclic) that is up and untried. */
function nextUp(plan: Plan, from: Member, tried: ReadonlySet<number>): Member | undefined {
  const members = plan.selection.members;
  const start = members.indexOf(from);
  for (let k = 0; k < members.length; k++) {
    const m = members[(start + k) % members.length]!;
    const status = plan.pool.endpoints[m.slot]!.status;
    if (!tried.has(m.slot) && status !== 'down' && status !== 'tunnel-down') return m;
  }
  return undefined;
}

/** Turns one prompt's answer into its result; a reasoning model cut off before answering is not an answer. */
function answered(plan: Plan, slot: Slot, member: Member, sent: Sent<unknown>, answer: Answer | Error, attempts: number, ownsUsage: boolean): PromptResult {
  const { ctx, gen } = plan;
  const doneMs = ctx.now();
  const base = unfinished(slot, 'failed', '', doneMs, member.id, attempts);
  base.timings.sentMs = ctx.since(sent.sentAt);
  base.timings.firstByteMs = ctx.since(sent.firstByteAt);
  if (answer instanceof Error) return { ...base, error: answer.message };
  // Per-prompt tokens are known only when the usage covers this prompt alone.
  const tokens = ownsUsage && sent.usage ? { promptTokens: sent.usage.promptTokens, completionTokens: sent.usage.completionTokens } : {};
  const common = { ...base, ...tokens, reasoning: answer.reasoning, finishReason: answer.finishReason, ...(answer.texts ? { texts: answer.texts } : {}) };
  if (answer.text === null && answer.finishReason === 'length' && !(gen.reasoningFallback && answer.reasoning)) {
    return {
      ...common,
      error: `truncated: the model spent its whole max_tokens budget${answer.reasoning ? ' on reasoning' : ''} before answering (finish_reason "length"); raise max_tokens`,
    };
  }
  const text = answer.text ?? (gen.reasoningFallback ? (answer.reasoning ?? '') : '');
  return { ...common, status: 'ok', ok: true, text, error: null };
}

import { RequestFailure } from '../http/failure.ts';
import type { GenerationOptions, PoolOptions } from './options.ts';
import { CHAT_BATCH, RAW } from '../requests/request-shapes.ts';
import { speaksHarmony } from '../templating/harmony.ts';
import { chatMessages, templateKwargs } from '../templating/messages.ts';
import { ServerRenderer, type PlanRequest, type PreparedPlan } from '../templating/server-render.ts';
import type { FileTemplate } from '../templating/setting.ts';
import { fill } from '../templating/skeleton.ts';
import { FileRenderer } from '../templating/template-file.ts';
import type { Member } from './selection.ts';
import type { Outgoing, SendCall, SendSink, Shape, Transport } from './transport.ts';

/** `param`s vLLM names for errors about a prompt's own content (context length, its tokens). */
const PROMPT_PARAMS = new Set(['prompt', 'input_tokens', 'messages', 'max_tokens', 'max_completion_tokens', 'prompt_embeds']);

/**
 * The pool's batching in one place: how a list meets the chat template (per endpoint and model,
 * once), its split at the endpoint's prompt-list cap (ours, or a lower one learned from its 400 or
 * 413), and the bisection of a list the server rejects so only the offending prompts fail.
 */
export class Batcher {
  private readonly learnedCaps = new Map<number, number>();
  private readonly fileRenderers = new WeakMap<FileTemplate, FileRenderer>();
  readonly renderer: ServerRenderer;

  constructor(
    private readonly transport: Transport,
    private readonly options: PoolOptions,
  ) {
    this.renderer = new ServerRenderer((slot) => transport.clients[slot]!, options.lookupTimeoutMs);
  }

  /** See SwarmPool.send. */
  async send(member: Member, model: string, prompts: readonly string[], shape: Shape, gen: GenerationOptions, call: SendCall, sink: SendSink): Promise<void> {
    const o: Outgoing = { member, model, prompts, offset: 0, shape, rendering: RAW, gen, call, sink };
    // One prompt: nothing to bisect or split, so no exchange around it (a request per prompt; the caller reads its failure).
    if (shape === 'chat') return this.transport.request(o);
    if (shape === 'embed') return this.transport.embed(member, model, prompts, call, sink);
    const setting = gen.template ?? 'none';
    if (setting === 'none') return this.sendList(o);
    if (typeof setting === 'object') {
      let renderer = this.fileRenderers.get(setting);
      if (!renderer) this.fileRenderers.set(setting, (renderer = new FileRenderer(setting)));
      const kwargs = templateKwargs(gen.extra);
      const texts = prompts.map((p) => renderer.render(chatMessages(p, gen.system), kwargs));
      return this.sendList({ ...o, prompts: texts, rendering: { template: 'file', harmony: speaksHarmony(texts[0] ?? '') } });
    }
    const request: PlanRequest = {
      model,
      system: gen.system,
      kwargs: templateKwargs(gen.extra),
      chatBatchFits: !call.stream && (gen.n ?? 1) === 1 && gen.extra?.['tools'] === undefined,
    };
    if (request.chatBatchFits && (await this.renderer.servesChatBatch(member.slot, model, call))) {
      try {
        return await this.sendList({ ...o, rendering: CHAT_BATCH });
      } catch (err) {
        if (!RequestFailure.from(err).routeMissing) throw err;
        // An older server than its model's others (a mixed swarm): nothing was answered; its batches take the next path from now on.
        this.renderer.lacksChatBatch(member.slot);
      }
    }
    const plan = await this.renderer.prepared(member.slot, request, call);
    return this.sendPlanned(o, prompts, plan, request, setting === 'server');
  }

  /** Groups a batch run's prompts as Aurora-Swarm's send_all_batched: prompt i to member i mod n, each group cut at the prompt-list cap. */
  groupBatches<T>(items: readonly T[], members: readonly Member[]): Array<{ member: Member; items: T[] }> {
    const groups = members.map(() => [] as T[]);
    for (let i = 0; i < items.length; i++) groups[i % members.length]!.push(items[i]!);
    return groups.flatMap((group, m) => chunk(group, this.options.maxPromptsPerRequest).map((part) => ({ member: members[m]!, items: part })));
  }

  forget(slot: number): void {
    this.learnedCaps.delete(slot);
    this.renderer.forget(slot);
  }

  /** A batch's list (from offset 0 of its sink), split at the endpoint's prompt-list cap. */
  private sendList(o: Outgoing): Promise<void> {
    const batch: Outgoing = { ...o, shape: 'batch' };
    const cap = Math.min(this.learnedCaps.get(o.member.slot) ?? Infinity, this.options.maxPromptsPerRequest);
    if (o.prompts.length <= cap) return this.exchange(batch);
    const parts: Array<Promise<void>> = [];
    for (let at = 0; at < o.prompts.length; at += cap) parts.push(this.exchange({ ...batch, prompts: o.prompts.slice(at, at + cap), offset: at }));
    return allOrFirstFailure(parts);
  }

  /**
   * A templated batch on `/v1/completions`, as its plan says: placed in the template's skeleton (text,
   * no BOS added); rendered prompt by prompt through `/tokenize` (a prompt it rejects fails alone,
   * the rest go on under a sink that maps their positions back); or raw where the server cannot render.
   */
  private async sendPlanned(o: Outgoing, prompts: readonly string[], plan: PreparedPlan, request: PlanRequest, insist: boolean): Promise<void> {
    const { member, model, call, sink } = o;
    if (plan.kind === 'skeleton') {
      const texts = prompts.map((p) => fill(plan.skeleton, p));
      return this.sendList({ ...o, prompts: texts, rendering: { template: 'skeleton', harmony: plan.skeleton.harmony } });
    }
    if (plan.kind === 'raw') {
      if (insist) throw new RequestFailure('protocol', `${member.id} does not render chat templates through /tokenize: ${plan.why}`);
      call.note(`batches skip the chat template on ${member.id}: /tokenize does not render messages there (${plan.why}); give --template file:PATH to render client-side`);
      return this.sendList(o);
    }
    call.note(`batches for ${model}: ${plan.why}, so each prompt is rendered by its own POST /tokenize (one request per distinct prompt)`);
    const rendered = await this.renderer.renderEach(member.slot, request, prompts, call.signal, call);
    const kept: number[] = [];
    const ids: number[][] = [];
    rendered.forEach((r, i) => (r instanceof RequestFailure ? sink.onPromptError(i, r) : (kept.push(i), ids.push(r))));
    if (!ids.length) return;
    return this.sendList({ ...o, prompts: ids, rendering: { template: 'tokenize', harmony: plan.harmony }, sink: kept.length === prompts.length ? sink : picked(sink, kept) });
  }

  private async exchange(o: Outgoing): Promise<void> {
    try {
      await this.transport.request(o);
    } catch (err) {
      const failure = RequestFailure.from(err);
      if (failure.kind !== 'http' || o.shape === 'chat') throw failure;
      const again: Outgoing = { ...o, offset: 0, sink: shifted(o.sink, o.offset) };
      // A proxy's body cap (413): the list is too big in bytes, not wrong; it goes again in halves, and the endpoint's lists stay that size.
      if (failure.status === 413 && o.prompts.length > 1) {
        this.learnedCaps.set(o.member.slot, Math.ceil(o.prompts.length / 2));
        return this.sendList(again);
      }
      if (failure.status !== 400) throw failure;
      const serverCap = /maximum allowed count of (\d+)/.exec(failure.message);
      if (serverCap && Number(serverCap[1]) >= 1 && Number(serverCap[1]) < o.prompts.length) {
        this.learnedCaps.set(o.member.slot, Number(serverCap[1]));
        return this.sendList(again);
      }
      // A field of the request itself is wrong: every prompt would fail alike, so do not bisect.
      if (failure.param !== null && !PROMPT_PARAMS.has(failure.param)) throw failure;
      return this.bisect(o, failure);
    }
  }

  /**
   * Batch surgery: halves of a rejected list are sent apart until each rejected prompt stands alone
   * with the server's message for it — O(k log n) requests for k bad prompts. Only an error that
   * speaks of no prompt (no prompt `param`, no context length) and rejects both halves with the very
   * words of their parent is taken as the request's own fault, failing the whole list: two over-long
   * prompts of the same length get the same words, and each must still fail alone.
   */
  private async bisect(o: Outgoing, failure: RequestFailure): Promise<void> {
    const { prompts, offset, sink } = o;
    if (prompts.length === 1) return sink.onPromptError(offset, failure);
    const half = Math.ceil(prompts.length / 2);
    const parts = [half, prompts.length].map((end, k): Outgoing => ({ ...o, shape: 'batch', prompts: prompts.slice(k ? half : 0, end), offset: offset + (k ? half : 0) }));
    const tries = await Promise.allSettled(parts.map((part) => this.transport.request(part)));
    const failures = tries.map((t) => (t.status === 'rejected' ? RequestFailure.from(t.reason) : null));
    const other = failures.find((f) => f && !(f.kind === 'http' && f.status === 400));
    if (other) throw other;
    if (!aboutAPrompt(failure) && failures.every((f) => f?.message === failure.message)) {
      for (let i = 0; i < prompts.length; i++) sink.onPromptError(offset + i, failure);
      return;
    }
    await allOrFirstFailure(parts.map((part, k) => (failures[k] ? this.bisect(part, failures[k]!) : Promise.resolve())));
  }
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}

/** A sink for a part of a list that starts at `offset`. */
function shifted(sink: SendSink, offset: number): SendSink {
  return {
    onAnswer: (i, answer, times) => sink.onAnswer(offset + i, answer, times),
    onPromptError: (i, failure) => sink.onPromptError(offset + i, failure),
    onUsage: (usage, own) => sink.onUsage(usage, own),
    onGap: (ms) => sink.onGap(ms),
    onCarried: (i) => sink.onCarried(offset + i),
  };
}

/** A sink for a list made of some of another list's prompts: `kept[i]` is where prompt i came from. */
function picked(sink: SendSink, kept: readonly number[]): SendSink {
  return {
    onAnswer: (i, answer, times) => sink.onAnswer(kept[i]!, answer, times),
    onPromptError: (i, failure) => sink.onPromptError(kept[i]!, failure),
    onUsage: (usage, own) => sink.onUsage(usage, own),
    onGap: (ms) => sink.onGap(ms),
    onCarried: (i) => sink.onCarried(kept[i]!),
  };
}

/** Waits for every part; the first failure (after all settle, so none answers behind our back) is thrown. */
async function allOrFirstFailure(parts: ReadonlyArray<Promise<void>>): Promise<void> {
  const settled = await Promise.allSettled(parts);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** A 400 the server says is about a prompt: it names a prompt's `param`, or (servers that name none) the context length. */
function aboutAPrompt(failure: RequestFailure): boolean {
  return failure.param !== null ? PROMPT_PARAMS.has(failure.param) : /maximum context length|input tokens|prompt/i.test(failure.message);
}

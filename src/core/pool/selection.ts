import { matchesTags } from '../endpoints/endpoint.ts';
import { checkExtra } from '../requests/generation-params.ts';
import { guidedFields, guidedWarning } from '../requests/guided.ts';
import { RequestFailure } from '../http/failure.ts';
import type { Meter } from '../http/request-meter.ts';
import { FALLBACK_MAX_MODEL_LEN } from '../endpoints/models.ts';
import type { GenerationOptions } from './options.ts';
import type { EndpointState } from './endpoint-states.ts';

/** An endpoint taking part in one run, with what the run needs to size requests for it. */
export interface Member {
  readonly slot: number;
  readonly id: string;
  readonly maxModelLen: number;
}

export interface Selection {
  model: string;
  members: Member[];
  warnings: string[];
}

/** A run cannot start: no endpoint fits. The message says what there is instead. */
export class SelectionError extends Error {
  override name = 'SelectionError';
}

/** What choosing a run's endpoints reads of the pool. */
export interface Candidates {
  readonly endpoints: readonly Readonly<EndpointState>[];
  lookupModels(slot: number, meter?: Meter): Promise<void>;
  version(slot: number, meter?: Meter): Promise<string | null>;
}

/** Endpoints for a run: tag filter, reachable, serving the chosen model. Warns about those left out. `meter` counts the lookups. */
export async function selectMembers(pool: Candidates, gen: GenerationOptions, tags: ReadonlyArray<[string, string]>, signal: AbortSignal, exclude: readonly string[] = [], meter?: Meter): Promise<Selection> {
  checkExtra(gen.extra);
  if (!pool.endpoints.length) throw new SelectionError('the (sub-)pool has no endpoints');
  const left = new Set(exclude);
  const tagged = pool.endpoints.filter((s) => matchesTags(s.endpoint, tags) && !left.has(s.id));
  if (!tagged.length && left.size) throw new SelectionError(`every endpoint${tags.length ? ' with those tags' : ''} is excluded from runs`);
  if (!tagged.length) {
    const present = [...new Set(pool.endpoints.flatMap((s) => Object.entries(s.endpoint.tags).map(([k, v]) => `${k}=${v}`)))];
    const wanted = tags.map(([k, v]) => `${k}=${v}`).join(', ');
    throw new SelectionError(`no endpoint has tag ${wanted}; tags in the hostfile: ${present.join(', ') || '(none)'}`);
  }
  await untilAborted(Promise.all(tagged.map((s) => pool.lookupModels(s.slot, meter))), signal);
  const warnings: string[] = [];
  // A degraded endpoint is benched, not gone: the run's breaker probes it after its cool-down.
  const up = tagged.filter((s) => s.status === 'up' || s.status === 'degraded');
  const down = tagged.filter((s) => !up.includes(s));
  if (!up.length) throw new SelectionError(`no endpoint is usable: ${listed(down, describeDown)}`);
  if (down.length) warnings.push(`left out ${down.length.toLocaleString('en-US')} endpoint(s) that cannot be used: ${listed(down, describeDown)}`);

  // Unnamed, the model is the first listed, by a generation server before an embedding one (tagged role=embed).
  const listing = up.filter((s) => s.models?.length).sort((x, y) => Number(x.endpoint.tags.role === 'embed') - Number(y.endpoint.tags.role === 'embed'));
  const model = gen.model || listing[0]?.models![0]!.id;
  if (!model) throw new SelectionError('no endpoint lists a model in /v1/models; name one with --model');
  const serving = up.filter((s) => s.models === null || s.models.some((m) => m.id === model));
  const others = up.filter((s) => !serving.includes(s));
  if (!serving.length) {
    throw new SelectionError(`no endpoint serves model "${model}"; served: ${describeServed(up)}`);
  }
  if (others.length) {
    warnings.push(`left out ${others.length} endpoint(s) that do not serve "${model}": ${listed(others, (s) => `${s.id} (${s.models!.map((m) => m.id).join(', ')})`)}`);
  }
  const unsized = serving.filter((s) => maxModelLenOf(s, model) === null);
  if (unsized.length && gen.maxTokens === undefined) {
    warnings.push(
      `max_model_len unknown for ${listed(unsized, (s) => s.id)}: sizing max_tokens for ${FALLBACK_MAX_MODEL_LEN} tokens of context (set --max-tokens to choose)`,
    );
  }
  const members = serving.map((s) => ({ slot: s.slot, id: s.id, maxModelLen: maxModelLenOf(s, model) ?? FALLBACK_MAX_MODEL_LEN }));
  // Every prompt would be refused by every endpoint (vLLM checks prompt + max_tokens against the context): say so before sending any.
  const widest = serving.reduce((m, s) => Math.max(m, maxModelLenOf(s, model) ?? Infinity), 0);
  if (gen.maxTokens !== undefined && gen.maxTokens >= widest) {
    throw new SelectionError(`max_tokens ${gen.maxTokens} leaves no room for a prompt: ${model}'s context (max_model_len) is ${widest} tokens on every endpoint serving it`);
  }
  const guided = guidedFields(gen.extra);
  if (guided.length) {
    const versions = await Promise.all(members.map(async (m) => ({ id: m.id, version: await pool.version(m.slot, meter) })));
    const warning = guidedWarning(guided, versions);
    if (warning) warnings.push(warning);
  }
  return { model, members, warnings };
}

/** `work`, or a cancellation as soon as `signal` aborts (one listener, removed when `work` settles). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new RequestFailure('cancelled', 'cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new RequestFailure('cancelled', 'cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then(
      (value) => (signal.removeEventListener('abort', onAbort), resolve(value)),
      (err: unknown) => (signal.removeEventListener('abort', onAbort), reject(err)),
    );
  });
}

function maxModelLenOf(state: Readonly<EndpointState>, model: string): number | null {
  return state.models?.find((m) => m.id === model)?.maxModelLen ?? null;
}

/** The first few of a swarm's endpoints in a message, then how many more: 10,000 down ones made a 666,000-character line. */
function listed<T>(items: readonly T[], show: (item: T) => string, max = 5): string {
  const shown = items.slice(0, max).map(show).join('; ');
  return items.length > max ? `${shown}; … and ${(items.length - max).toLocaleString('en-US')} more` : shown;
}

function describeDown(s: Readonly<EndpointState>): string {
  return `${s.id} (${s.reason ?? 'down'})`;
}

function describeServed(states: ReadonlyArray<Readonly<EndpointState>>): string {
  const counts = new Map<string, number>();
  for (const s of states) for (const m of s.models ?? []) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
  return [...counts].map(([id, n]) => `${id} (${n} endpoint${n === 1 ? '' : 's'})`).join(', ') || '(nothing listed)';
}

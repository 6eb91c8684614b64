/**
 * The request that carried a prompt, as the core builds it (its own chatBody/completionsBody) from
 * the run's parameters: the endpoint URL, the body, where a batched prompt sat in its request's
 * list, the cache_salt. Pure; the table shows it as text.
 */
import { CHAT_BATCH_PATH, chatBatchBody, chatBody, completionsBody } from '../../src/core/requests/request-shapes.ts';
import { generationParams } from '../../src/core/requests/generation-params.ts';
import { TEMPLATE_PATH_NOTES } from '../../src/core/templating/setting.ts';
import type { ResultRow, RunContext } from '../../src/panel/protocol.ts';

export interface SentContext {
  batched: boolean;
  streamed: boolean;
  /** The model the run used (as the servers reported it), else the one asked for. */
  model: string | null;
  /** Null for records saved before runs kept their parameters. */
  params: RunContext['params'] | null;
  /** A comparison's salt for the rows shown (its first batched round). */
  cacheSalt: string | null;
}

/** A batched prompt's place in its request's list: the rows sent to the same endpoint at the same moment, in input order. */
export function listPosition(rows: ReadonlyArray<ResultRow | undefined>, r: ResultRow): { position: number; of: number } | null {
  if (r.endpoint === null || r.timings.sentMs === null) return null;
  let position = 0;
  let of = 0;
  for (const x of rows) {
    if (!x || x.endpoint !== r.endpoint || x.timings.sentMs !== r.timings.sentMs) continue;
    of++;
    if (x.index < r.index) position++;
  }
  return { position: position + 1, of };
}

const AUTO_MAX_TOKENS = -1;

export function requestSentText(r: ResultRow, ctx: SentContext, place: { position: number; of: number } | null): string {
  if (r.endpoint === null || r.timings.sentMs === null) return `Not sent${r.error ? `: ${r.error}` : ''}.`;
  const p = ctx.params;
  const salt = ctx.cacheSalt ?? (typeof p?.extra?.cache_salt === 'string' ? p.extra.cache_salt : null);
  const gen = { ...generationParams(p ?? {}), ...(salt ? { extra: { ...p?.extra, cache_salt: salt } } : {}) };
  const model = ctx.model ?? '(the first model the endpoint serves)';
  const maxTokens = p?.maxTokens ?? AUTO_MAX_TOKENS;
  // A batched row says how its prompt met the chat template (rows from before it did were raw lists).
  const template = ctx.batched ? (r.template ?? 'none') : null;
  const body =
    template === 'chat-batch'
      ? chatBatchBody([r.prompt], gen, model, maxTokens)
      : template
        ? completionsBody([r.prompt], gen, model, maxTokens, ctx.streamed, { template, harmony: false })
        : chatBody(r.prompt, gen, model, maxTokens, ctx.streamed);
  if (maxTokens === AUTO_MAX_TOKENS) body.max_tokens = '(sized for the endpoint from its max_model_len)';
  const path = template === 'chat-batch' ? CHAT_BATCH_PATH : template ? '/v1/completions' : '/v1/chat/completions';
  const lines = [`POST http://${r.endpoint}${path}`];
  const list = template === 'chat-batch' ? '"messages" list' : '"prompt" list';
  if (template && place && place.of > 1) lines.push(`This prompt was item ${place.position} of ${place.of} in the request's ${list}; the other ${place.of - 1} are left out below.`);
  if (template && template !== 'none' && template !== 'chat-batch') lines.push(`Chat template: ${TEMPLATE_PATH_NOTES[template]}. The list carried the rendered prompt; shown below is the text before rendering.`);
  if (salt) lines.push(`cache_salt: ${salt}`);
  if (r.attempts > 1) lines.push(`${r.attempts} requests carried it (retries or failover); this is the last one's endpoint.`);
  if (!p) lines.push('(The run kept no parameters: sampling fields are missing.)');
  lines.push('', JSON.stringify(body, null, 2));
  return lines.join('\n');
}

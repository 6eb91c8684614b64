import { badRequest } from './errors.ts';
import { hashString } from './random.ts';
import { optionalBool, optionalInt, type Body } from './validation.ts';

/** vLLM's cap on top logprobs per token (`--max-logprobs`, default 20). */
const MAX_LOGPROBS = 20;
const ALTERNATIVES = ['the', ' of', ' and', ' to', ' a', ' in', ' is', ' that', ' for', ' it', ' as', ' with', ' was', ' on', ' be', ' at', ' by', ' this', ' had', ' not'];

/** One output token's logprob and the `top` most likely tokens at its position (itself first). */
interface TokenLogprob {
  token: string;
  logprob: number;
  top: Array<[string, number]>;
}

/**
 * Made-up but consistent logprobs: a token's is a stable function of its text and position, and
 * the alternatives are less likely, so the sampled token is always the greedy one.
 */
function tokenLogprob(token: string, position: number, top: number): TokenLogprob {
  const logprob = -((hashString(`${position}:${token}`) % 2000) / 1000);
  const others = ALTERNATIVES.filter((t) => t !== token).slice(0, Math.max(0, top - 1));
  return { token, logprob, top: top === 0 ? [] : [[token, logprob], ...others.map((t, i): [string, number] => [t, logprob - 1 - i * 0.5])] };
}

/** Completions `logprobs: k`: undefined = none. */
export function completionLogprobsField(body: Body): number | undefined {
  const k = optionalInt(body, 'logprobs', 0);
  if (k !== undefined && k > MAX_LOGPROBS) throw badRequest(`Requested sample logprobs of ${k}, which is greater than max allowed: ${MAX_LOGPROBS}`, 'logprobs');
  return k;
}

/** Chat `logprobs: true` with `top_logprobs: k`: undefined = none. */
export function chatLogprobsField(body: Body): number | undefined {
  const top = optionalInt(body, 'top_logprobs', 0);
  if (!optionalBool(body, 'logprobs')) {
    if (top !== undefined && top > 0) throw badRequest('when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs');
    return undefined;
  }
  if (top !== undefined && top > MAX_LOGPROBS) throw badRequest(`Requested top logprobs of ${top}, which is greater than max allowed: ${MAX_LOGPROBS}`, 'top_logprobs');
  return top ?? 0;
}

/** vLLM's CompletionLogProbs for `tokens` starting at output position `first`, text offsets from `offset`. */
export function completionLogprobs(tokens: readonly string[], k: number, first = 0, offset = 0): object {
  const entries = tokens.map((t, i) => tokenLogprob(t, first + i, k));
  const offsets: number[] = [];
  for (const t of tokens) {
    offsets.push(offset);
    offset += t.length;
  }
  return {
    text_offset: offsets,
    token_logprobs: entries.map((e) => e.logprob),
    tokens: entries.map((e) => e.token),
    top_logprobs: entries.map((e) => Object.fromEntries(e.top)),
  };
}

/** vLLM's ChatCompletionLogProbs for `tokens` starting at output position `first`. */
export function chatLogprobs(tokens: readonly string[], k: number, first = 0): object {
  const bytes = (t: string): number[] => [...Buffer.from(t, 'utf8')];
  return {
    content: tokens.map((t, i) => {
      const e = tokenLogprob(t, first + i, k);
      return { token: e.token, logprob: e.logprob, bytes: bytes(e.token), top_logprobs: e.top.map(([token, logprob]) => ({ token, logprob, bytes: bytes(token) })) };
    }),
  };
}

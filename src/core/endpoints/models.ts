import type { Endpoint } from './endpoint.ts';

/** A model card from `GET /v1/models`; `maxModelLen` is null where the server does not say (LoRA cards, non-vLLM servers). */
export interface ServedModel {
  id: string;
  maxModelLen: number | null;
}

/** Aurora-Swarm's fall-back context length when `/v1/models` cannot tell; we say when we use it. */
export const FALLBACK_MAX_MODEL_LEN = 131_072;

export function parseModelList(body: unknown): ServedModel[] {
  const data = (body as { data?: unknown })?.data;
  if (!Array.isArray(data)) throw new Error('`/v1/models` answered without a `data` list');
  return data
    .filter((card): card is { id: string; max_model_len?: unknown } => typeof card?.id === 'string')
    .map((card) => ({
      id: card.id,
      maxModelLen: typeof card.max_model_len === 'number' && card.max_model_len > 0 ? card.max_model_len : null,
    }));
}

/**
 * Aurora-Swarm's max_tokens sizing (chars/4 token heuristic): leave room for the prompt and a buffer,
 * never below 128, never above the budget. A batch is sized for its longest prompt, not the average,
 * so sizing never pushes one prompt over the context length and fails the whole batch.
 */
export function sizeMaxTokens(promptChars: number, maxModelLen: number, budget: number, buffer: number): number {
  return Math.min(budget, Math.max(128, maxModelLen - Math.floor(promptChars / 4) - buffer));
}

/**
 * What an endpoint serves for runs: a hostfile line's `model=` names it (a service that lists many
 * models is used for that one, its card kept when listed for its context length); without one,
 * whatever `/v1/models` lists (null: it could not tell).
 */
export function servedModels(endpoint: Pick<Endpoint, 'tags'>, listed: ServedModel[] | null): ServedModel[] | null {
  const named = endpoint.tags.model;
  if (!named) return listed;
  return [listed?.find((m) => m.id === named) ?? { id: named, maxModelLen: null }];
}

import { randomUUID } from 'node:crypto';
import type { SimOptions } from './options.ts';

/** `GET /v1/models`: one card for the served model, with the `max_model_len` clients size prompts by. */
export function modelList(options: SimOptions, created: number): object {
  const permission = {
    id: `modelperm-${randomUUID().replaceAll('-', '')}`,
    object: 'model_permission',
    created,
    allow_create_engine: false,
    allow_sampling: true,
    allow_logprobs: true,
    allow_search_indices: false,
    allow_view: true,
    allow_fine_tuning: false,
    organization: '*',
    group: null,
    is_blocking: false,
  };
  const card = {
    id: options.model,
    object: 'model',
    created,
    owned_by: 'vllm',
    root: options.model,
    parent: null,
    max_model_len: options.maxModelLen,
    permission: [permission],
  };
  return { object: 'list', data: [card] };
}

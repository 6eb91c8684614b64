import { broadcast, checkTreeReduce, generationParams, mapGather, scatterGather, treeReduce, type RunOptions } from '../../core/index.ts';
import { fillTemplate } from '../../core/run/plan.ts';
import type { RunRequest } from '../../panel/protocol.ts';
import { generationOptions, settings } from '../settings.ts';
import { isPorted, preparePorted } from './pattern-plan.ts';
import { clip, count, LaunchError, type Prepared } from './prepared.ts';

export { LaunchError, type Prepared };

/** Settings' model and max tokens, overridden by the request's generation parameters. */
export function runOptions(request: RunRequest): RunOptions {
  return {
    ...generationOptions(settings()),
    ...generationParams(request),
    ...(request.stream ? { stream: true } : {}),
    tags: request.tags,
  };
}

/** Checks the request's input and says how to run it; throws LaunchError on input that cannot run. */
export function prepare(request: RunRequest): Prepared {
  if (isPorted(request)) return preparePorted(request);
  const mode = request.batch ? 'batched' : 'individual';
  const need = (ok: unknown, what: string) => {
    if (!ok) throw new LaunchError(what);
  };
  switch (request.pattern) {
    case 'scatter': {
      need(request.prompts.length, 'the prompt set is empty');
      const prompts = request.prompts;
      return {
        label: request.compare ? `${count(prompts.length, 'prompt')} · batched vs individual × ${request.compare.rounds}` : `${count(prompts.length, 'prompt')} · ${mode}`,
        prompts,
        total: () => prompts.length,
        make: (pool, o) => scatterGather(pool, prompts, { ...o, batch: request.batch }),
      };
    }
    case 'map': {
      const { template, items } = request;
      need(template?.trim(), 'map needs a template ({item} takes each item)');
      need(items?.length, 'map needs at least one item');
      const prompts = items!.map((item) => ({ prompt: fillTemplate(template!, { item }), input: { item } }));
      return {
        label: request.compare ? `${count(items!.length, 'item')} · batched vs individual × ${request.compare.rounds}` : `${count(items!.length, 'item')} · ${mode}`,
        prompts,
        total: () => prompts.length,
        make: (pool, o) => mapGather(pool, items!, template!, { ...o, batch: request.batch }),
      };
    }
    case 'broadcast': {
      need(!request.compare, 'batched vs individual compares scatter and map runs');
      const prompt = request.prompt ?? '';
      need(prompt.trim(), 'broadcast needs a prompt');
      return { label: `broadcast: ${clip(prompt)}`, prompts: [], total: (endpoints) => endpoints, make: (pool, o) => broadcast(pool, prompt, o) };
    }
    case 'tree-reduce': {
      need(!request.compare, 'batched vs individual compares scatter and map runs');
      const items = request.items?.length ? request.items : undefined;
      const prompt = items ? request.template : request.prompt;
      need(prompt?.trim(), items ? 'tree-reduce over items needs a template' : 'tree-reduce needs a prompt');
      const input = { prompt: prompt!, reducePrompt: request.reducePrompt ?? '', ...(items ? { items } : {}), ...(request.fanin ? { fanin: request.fanin } : {}) };
      try {
        checkTreeReduce(input);
      } catch (err) {
        throw new LaunchError((err as Error).message);
      }
      return {
        label: `tree-reduce of ${items ? count(items.length, 'item') : 'every endpoint'} (fan-in ${input.fanin ?? 50})`,
        prompts: [],
        total: (endpoints) => reduceTotal(items ? items.length : endpoints, input.fanin ?? 50),
        make: (pool, o) => treeReduce(pool, input, o),
      };
    }
    default:
      return preparePorted(request);
  }
}

/** Leaves plus every reduce prompt: each level merges `fanin` answers at a time until one is left. */
function reduceTotal(leaves: number, fanin: number): number {
  let total = leaves;
  for (let n = leaves; n > 1; ) {
    n = Math.ceil(n / fanin);
    total += n;
  }
  return total;
}


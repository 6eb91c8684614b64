import { aggregate, aggregateText, type Aggregate, type AggregateName } from '../aggregators/named.ts';
import { fillTemplate, makePlan, type RunOptions } from '../run/plan.ts';
import type { SwarmPool } from '../pool/swarm-pool.ts';
import type { PromptResult } from '../run/result.ts';
import { Run } from '../run/run.ts';
import { slice } from '../pool/subpool.ts';
import { askEach, texts, within } from './steps.ts';

export interface Stage {
  name: string;
  /** `{input}` takes the previous stage's output (the pipeline's input for the first stage). */
  template: string;
  /** How many endpoints answer this stage. */
  agents: number;
  /** Keeps only the results it accepts, before the transform. */
  filter?: (result: PromptResult) => boolean;
  /** The stage's output from its results; default: the successful texts joined by newlines. */
  transform?: (results: PromptResult[]) => unknown;
}

/** A stage as a stages file or the panel names it: `keep` a regular expression, `transform` a named aggregator. */
export interface StageSpec {
  name: string;
  template: string;
  agents: number;
  keep?: RegExp;
  transform?: AggregateName;
}

/** The stage a spec describes; its named transform's output is the aggregate's text, and `seen` gets the aggregate itself. */
export function namedStage(spec: StageSpec, seen?: (aggregate: Aggregate) => void): Stage {
  const { keep, transform, ...stage } = spec;
  return {
    ...stage,
    ...(keep ? { filter: (r: PromptResult) => keep.test(r.text) } : {}),
    ...(transform
      ? {
          transform: (results: PromptResult[]) => {
            const a = aggregate(transform, results);
            seen?.(a);
            return aggregateText(a);
          },
        }
      : {}),
  };
}

export interface PipelineInput {
  stages: readonly Stage[];
  input: unknown;
  /** Every stage draws from the first endpoints (default); false: each stage gets the next consecutive slice. */
  reuseAgents?: boolean;
}

export interface PipelineOutcome {
  output: unknown;
  /** What each stage made, with how many endpoints it had (consecutive slices can run out). */
  stages: Array<{ name: string; endpoints: number; output: unknown }>;
}

/** Aurora-Swarm's run_pipeline: stage after stage, each broadcasting its filled template; results carry the stage as `level`. */
export function pipeline(pool: SwarmPool, input: PipelineInput, options: RunOptions = {}): Run<PipelineOutcome> {
  const reuse = input.reuseAgents ?? true;
  return new Run(pool, { pattern: 'pipeline', batch: false }, async (ctx) => {
    const plan = await makePlan(pool, options, ctx);
    let current = input.input;
    let offset = 0;
    const stages: PipelineOutcome['stages'] = [];
    for (const [level, stage] of input.stages.entries()) {
      const start = reuse ? 0 : offset;
      const agents = slice(pool, start, Math.min(start + stage.agents, pool.endpoints.length));
      if (!reuse) offset = start + agents.endpoints.length;
      const prompt = fillTemplate(stage.template, { input: typeof current === 'string' ? current : JSON.stringify(current) });
      const results = await askEach(within(plan, agents), prompt, level, { stage: stage.name });
      current = (stage.transform ?? joinTexts)(stage.filter ? results.filter(stage.filter) : results);
      stages.push({ name: stage.name, endpoints: agents.endpoints.length, output: current });
    }
    return { output: current, stages };
  });
}

const joinTexts = (results: PromptResult[]): string => texts(results).join('\n');

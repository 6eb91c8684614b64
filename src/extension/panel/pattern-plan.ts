import { blackboard, broadcast, fanOutFanIn, namedStage, pipeline, templatedSession, type Aggregate, type BlackboardOutcome, type PipelineOutcome, type ReducedOutcome } from '../../core/index.ts';
import type { RunRequest } from '../../panel/protocol.ts';
import { blackboardSteps, broadcastSteps, fanOutSteps, pipelineSteps } from './pattern-steps.ts';
import { clip, count, LaunchError, type Prepared } from './prepared.ts';

/**
 * The ported patterns of the panel (issue 12): broadcast with an aggregator, fan-out/fan-in,
 * pipeline and blackboard, each run by its core pattern. What each did step by step comes back as a
 * ReduceView's levels (see the protocol's patterns block).
 */
export function preparePorted(request: RunRequest): Prepared {
  const p = request.patterns ?? {};
  const need = (ok: unknown, what: string) => {
    if (!ok) throw new LaunchError(what);
  };
  need(!request.compare, 'batched vs individual compares scatter and map runs');
  const prompt = request.prompt ?? '';
  switch (request.pattern) {
    case 'broadcast': {
      need(prompt.trim(), 'broadcast needs a prompt');
      const name = p.aggregate!;
      return {
        label: `broadcast → ${name}: ${clip(prompt)}`,
        prompts: [],
        total: (endpoints) => endpoints,
        make: (pool, o) => broadcast(pool, prompt, o),
        view: (report) => broadcastSteps(name, report.results, p.k),
      };
    }
    case 'fan-out-fan-in': {
      need(prompt.trim(), 'fan-out/fan-in needs a prompt');
      const collectPrompt = p.collectPrompt ?? '';
      need(collectPrompt.includes('{responses}'), 'the collect prompt must contain {responses}, where the answers go');
      const workers = p.workers;
      return {
        label: `fan-out/fan-in to ${workers ? count(workers, 'worker') : 'every endpoint'}: ${clip(prompt)}`,
        prompts: [],
        total: (endpoints) => Math.min(workers ?? endpoints, endpoints) + 1,
        make: (pool, o) => fanOutFanIn(pool, { prompt, collectPrompt, ...(workers ? { workers } : {}) }, o),
        view: (report) => (report.outcome ? fanOutSteps(report.outcome as ReducedOutcome, report.results) : undefined),
      };
    }
    case 'pipeline': {
      const specs = p.stages ?? [];
      need(specs.length, 'a pipeline needs at least one stage');
      const aggregates = new Map<number, Aggregate>();
      const stages = specs.map((s, i) => {
        need(s.template.includes('{input}'), `stage ${i + 1} (${s.name}): the template must contain {input}`);
        return namedStage({ name: s.name, template: s.template, agents: s.agents, ...(s.keep ? { keep: regex(s.keep, `stage ${i + 1} keep`) } : {}), ...(s.transform ? { transform: s.transform } : {}) }, (a) => aggregates.set(i, a));
      });
      const input = p.input ?? '';
      return {
        label: `pipeline of ${count(stages.length, 'stage')}: ${stages.map((s) => s.name).join(' → ')}`,
        prompts: [],
        total: (endpoints) => specs.reduce((n, s) => n + Math.min(s.agents, endpoints), 0),
        make: (pool, o) => pipeline(pool, { stages, input, reuseAgents: !p.consecutive }, o),
        view: (report) => (report.outcome ? pipelineSteps(report.outcome as PipelineOutcome, report.results, aggregates) : undefined),
      };
    }
    case 'blackboard': {
      const sections = p.sections ?? [];
      need(sections.length && sections.every((s) => /^[\w.-]+$/.test(s)), 'a blackboard needs sections: role names (letters, digits, . _ -)');
      const template = p.boardPrompt ?? '';
      need(template.includes('{board}'), 'the blackboard prompt must contain {board} (and may contain {section})');
      const rounds = p.maxRounds ?? 3;
      const session = templatedSession(sections, template, rounds, p.until ? regex(p.until, 'until') : undefined);
      return {
        label: `blackboard: ${sections.join(', ')} × ${count(rounds, 'round')}`,
        prompts: [],
        // At most: each round asks every endpoint carrying a section's role once (fewer if it converges early).
        total: (endpoints) => rounds * endpoints,
        make: (pool, o) => blackboard(pool, session, o),
        view: (report) => (report.outcome ? blackboardSteps(report.outcome as BlackboardOutcome, report.results) : undefined),
      };
    }
    default:
      throw new LaunchError(`${request.pattern} is not a ported pattern`);
  }
}

/** Whether the request runs through preparePorted. */
export function isPorted(request: RunRequest): boolean {
  return request.pattern === 'fan-out-fan-in' || request.pattern === 'pipeline' || request.pattern === 'blackboard' || (request.pattern === 'broadcast' && Boolean(request.patterns?.aggregate));
}

/** Each step's prompt is made as the run goes (filled with the step before): the result carries it. */

function regex(source: string, what: string): RegExp {
  try {
    return new RegExp(source);
  } catch (err) {
    throw new LaunchError(`${what} is not a regular expression (${(err as Error).message})`);
  }
}

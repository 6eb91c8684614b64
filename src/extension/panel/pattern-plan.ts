import {
  aggregate,
  aggregateText,
  blackboard,
  boardText,
  broadcast,
  fanOutFanIn,
  namedStage,
  pipeline,
  templatedSession,
  type Aggregate,
  type BlackboardOutcome,
  type PipelineOutcome,
  type PromptResult,
  type ReducedOutcome,
  type RunReport,
} from '../../core/index.ts';
import { fillTemplate } from '../../core/plan.ts';
import type { RunRequest, StepView } from '../../panel/protocol.ts';
import { clip, count, LaunchError, type Prepared } from './run-request-plan.ts';

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
        promptOf: () => prompt,
        view: (report) => {
          const answers = report.results.filter((r) => r.ok);
          if (!answers.length) return undefined;
          const a = aggregate(name, report.results, p.k);
          return { text: aggregateText(a), levels: [{ level: 0, label: `Answers · ${name}`, texts: answers.map((r) => r.text), aggregate: a }] };
        },
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
        promptOf: (r) => (r.level ? `(collect) ${collectPrompt}` : prompt),
        view: (report: RunReport<unknown>) => {
          const out = report.outcome as ReducedOutcome | undefined;
          return out && { text: out.text, levels: [{ level: 0, label: 'Workers', texts: out.answers }, { level: 1, label: 'Collector', texts: [out.text] }] };
        },
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
        // Each stage's prompt is its template filled with the output before it: known once that stage ran.
        promptOf: (r) => `(stage ${(r.level ?? 0) + 1}: ${String(r.input.stage ?? '')}) ${specs[r.level ?? 0]?.template ?? ''}`,
        view: (report) => {
          const out = report.outcome as PipelineOutcome | undefined;
          if (!out) return undefined;
          const levels = out.stages.map((s, i): StepView => {
            const a = aggregates.get(i);
            return { level: i, label: `Stage ${i + 1} · ${s.name} (${count(s.endpoints, 'agent')})`, texts: answersAt(report.results, i), ...(a ? { aggregate: a } : {}) };
          });
          return { text: textOf(out.output), levels };
        },
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
        promptOf: (r) => fillTemplate(template, { section: String(r.input.section ?? ''), board: '(the board as it stood)' }),
        view: (report) => {
          const out = report.outcome as BlackboardOutcome | undefined;
          if (!out) return undefined;
          const levels = out.snapshots.map(({ round }): StepView => ({ level: round, label: `Round ${round}`, texts: roundEntries(report.results, round) }));
          return { text: boardText(out.board), levels };
        },
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

/** A step's answers that succeeded, in order. */
function answersAt(results: readonly PromptResult[], level: number): string[] {
  return results.filter((r) => r.ok && (r.level ?? 0) === level).map((r) => r.text);
}

/** A round's entries, each under its section's name. */
function roundEntries(results: readonly PromptResult[], round: number): string[] {
  return results.filter((r) => r.ok && r.level === round).map((r) => `[${String(r.input.section ?? '')}] ${r.text}`);
}

function regex(source: string, what: string): RegExp {
  try {
    return new RegExp(source);
  } catch (err) {
    throw new LaunchError(`${what} is not a regular expression (${(err as Error).message})`);
  }
}

const textOf = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

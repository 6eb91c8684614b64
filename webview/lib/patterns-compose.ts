/**
 * What Compose edits for the ported patterns (broadcast's aggregator, fan-out/fan-in, pipeline,
 * blackboard) and the routing choice, and what of the RunRequest they make. Pure: node tests it.
 */
import type { AggregateName, Pattern, PatternParams, RouteStrategy, RunRequest, StageParams } from '../../src/panel/protocol.ts';

export const AGGREGATORS: Array<{ id: AggregateName | ''; label: string }> = [
  { id: '', label: 'none (every answer)' },
  { id: 'vote', label: 'majority vote' },
  { id: 'concat', label: 'concatenate' },
  { id: 'best-of', label: 'best of (longest)' },
  { id: 'top-k', label: 'top k (longest)' },
  { id: 'merge', label: 'merge JSON answers' },
  { id: 'stats', label: 'statistics of numbers' },
];

export const ROUTES: Array<{ id: RouteStrategy; label: string }> = [
  { id: 'round-robin', label: "round-robin (Aurora-Swarm's i mod n)" },
  { id: 'least-requests', label: 'least requests in flight' },
  { id: 'least-load', label: 'least load (running + waiting, /metrics)' },
  { id: 'kv-cache', label: 'least KV-cache use (/metrics)' },
  { id: 'prefix-aware', label: 'prefix-aware (shared prefixes meet a warm cache)' },
];

export const PORTED_PATTERNS: Array<{ id: Pattern; label: string; help: string }> = [
  { id: 'fan-out-fan-in', label: 'Fan-out / fan-in', help: 'The first workers answer the prompt; endpoint 0 collects their answers into one.' },
  { id: 'pipeline', label: 'Pipeline', help: "Stage after stage: each stage's agents answer its template, {input} the previous stage's output." },
  { id: 'blackboard', label: 'Blackboard', help: "Rounds in which each section's role= endpoints read the board and add entries, until an entry matches." },
];

export interface PatternsCompose {
  /** broadcast: '' shows every answer, else one aggregate of them. */
  aggregate: AggregateName | '';
  k: number;
  collectPrompt: string;
  /** '' = every endpoint. */
  workers: string;
  stages: StageParams[];
  input: string;
  consecutive: boolean;
  /** One section (role name) per line. */
  sectionsText: string;
  boardPrompt: string;
  maxRounds: number;
  until: string;
  route: RouteStrategy;
}

export function defaultPatterns(): PatternsCompose {
  return {
    aggregate: '',
    k: 3,
    collectPrompt: 'Combine these answers into one:\n{responses}',
    workers: '',
    stages: [
      { name: 'draft', template: 'Draft an answer: {input}', agents: 2 },
      { name: 'pick', template: 'Pick the best of these drafts:\n{input}', agents: 3, transform: 'vote' },
    ],
    input: '',
    consecutive: false,
    sectionsText: 'hypotheses\ncritiques',
    boardPrompt: 'You write {section}. The board so far:\n{board}',
    maxRounds: 3,
    until: '',
    route: 'round-robin',
  };
}

export const sections = (p: Pick<PatternsCompose, 'sectionsText'>) => p.sectionsText.split(/\r?\n/).map((s) => s.trim()).filter(Boolean);

/**
 * A ported pattern's first wave (prompts, characters) and why it cannot run yet; null for the
 * patterns Compose already knew (their summary is compose.ts's).
 */
export function portedSummary(pattern: Pattern, p: PatternsCompose, prompt: string, chosen: number): { count: number; chars: number; problem: string | null } | null {
  switch (pattern) {
    case 'broadcast':
      return p.aggregate === 'top-k' && !(Number.isInteger(p.k) && p.k >= 1) ? { count: chosen, chars: prompt.length * chosen, problem: 'k must be a whole number of at least 1.' } : null;
    case 'fan-out-fan-in': {
      const workers = p.workers.trim() ? Number(p.workers) : chosen;
      const n = Math.min(Number.isFinite(workers) ? workers : 0, chosen);
      const problem = !prompt.trim()
        ? 'Write the prompt the workers answer.'
        : !p.collectPrompt.includes('{responses}')
          ? 'The collect prompt must contain {responses}, where the answers go.'
          : !(Number.isInteger(workers) && workers >= 1)
            ? 'Workers must be a whole number of at least 1 (or empty: every endpoint).'
            : null;
      return { count: n, chars: prompt.length * n, problem };
    }
    case 'pipeline': {
      const first = p.stages[0];
      const bad = p.stages.findIndex((s) => !s.template.includes('{input}') || !(Number.isInteger(s.agents) && s.agents >= 1) || !validRegex(s.keep));
      const problem = !first ? 'Add a stage.' : bad >= 0 ? `Stage ${bad + 1}: its template needs {input}, agents a whole number of at least 1, keep a valid regular expression.` : null;
      const n = first ? Math.min(first.agents, chosen) : 0;
      return { count: n, chars: first ? (first.template.length + p.input.length) * n : 0, problem };
    }
    case 'blackboard': {
      const names = sections(p);
      const problem = !names.length || !names.every((s) => /^[\w.-]+$/.test(s))
        ? 'List the sections, one role name per line (letters, digits, . _ -).'
        : !p.boardPrompt.includes('{board}')
          ? 'The blackboard prompt must contain {board}.'
          : !(Number.isInteger(p.maxRounds) && p.maxRounds >= 1 && p.maxRounds <= 1000)
            ? 'Rounds must be a whole number from 1 to 1,000.'
            : !validRegex(p.until)
              ? '"Until" is not a valid regular expression.'
              : null;
      return { count: chosen, chars: p.boardPrompt.length * chosen, problem };
    }
    default:
      return null;
  }
}

/** What the ported patterns and the routing choice add to a RunRequest. */
export function portedRequest(pattern: Pattern, p: PatternsCompose, prompt: string): Pick<RunRequest, 'patterns' | 'route' | 'prompt'> {
  const route = p.route === 'round-robin' ? {} : { route: p.route };
  let patterns: PatternParams | undefined;
  switch (pattern) {
    case 'broadcast':
      if (p.aggregate) patterns = { aggregate: p.aggregate, ...(p.aggregate === 'top-k' ? { k: p.k } : {}) };
      break;
    case 'fan-out-fan-in':
      return { ...route, prompt, patterns: { collectPrompt: p.collectPrompt, ...(p.workers.trim() ? { workers: Number(p.workers) } : {}) } };
    case 'pipeline':
      patterns = { stages: p.stages.map(stageOf), input: p.input, ...(p.consecutive ? { consecutive: true } : {}) };
      break;
    case 'blackboard':
      patterns = { sections: sections(p), boardPrompt: p.boardPrompt, maxRounds: p.maxRounds, ...(p.until ? { until: p.until } : {}) };
      break;
  }
  return { ...route, ...(patterns ? { patterns } : {}) };
}

/** A stage as sent: no empty keep, no transform left unset. */
function stageOf(s: StageParams): StageParams {
  return { name: s.name.trim() || 'stage', template: s.template, agents: s.agents, ...(s.keep ? { keep: s.keep } : {}), ...(s.transform ? { transform: s.transform } : {}) };
}

function validRegex(source: string | undefined): boolean {
  if (!source) return true;
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

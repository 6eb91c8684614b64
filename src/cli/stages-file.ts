import { AGGREGATE_NAMES, namedStage, type AggregateName, type Stage } from '../core/index.ts';
import { CliError } from './exit.ts';
import { printable } from './format.ts';
import { configRegex, readConfigFile } from './config-file.ts';

/** Problems listed before the rest are counted. */
const LISTED = 20;

/**
 * Pipeline stages from JSON or YAML: `[{"name", "template" (with {input}), "agents", "keep" (a regex an answer
 * must match), "transform" (an aggregator: vote, concat, best-of, top-k, merge, stats)}]` or
 * `{"stages": [...]}`. Every problem is named by stage, all at once; a bad file is bad input (exit 2).
 */
export async function readStages(path: string): Promise<Stage[]> {
  const shown = printable(path);
  const raw = await readConfigFile(path);
  const list = Array.isArray(raw) ? raw : (raw as { stages?: unknown } | null)?.stages;
  if (!Array.isArray(list) || !list.length) throw new CliError(`${shown}: expected a non-empty JSON list of stages (or {"stages": [...]})`);
  const problems: string[] = [];
  const stages = list.map((spec: unknown, i): Stage => {
    const at = `${shown}: stage ${i + 1}`;
    const s = (spec ?? {}) as Record<string, unknown>;
    if (typeof s.template !== 'string' || !s.template.includes('{input}')) problems.push(`${at}: "template" must be a string containing {input}`);
    const agents = s.agents ?? 1;
    if (!Number.isInteger(agents) || (agents as number) < 1) problems.push(`${at}: "agents" must be a whole number of at least 1`);
    const keep = configRegex(s.keep, at, 'keep', problems);
    const transform = s.transform as AggregateName | undefined;
    if (transform !== undefined && !AGGREGATE_NAMES.includes(transform)) problems.push(`${at}: "transform" must be one of ${AGGREGATE_NAMES.join(', ')}`);
    return namedStage({
      name: typeof s.name === 'string' ? s.name : `stage ${i + 1}`,
      template: String(s.template),
      agents: agents as number,
      ...(keep ? { keep } : {}),
      ...(transform ? { transform } : {}),
    });
  });
  if (problems.length) {
    const more = problems.length > LISTED ? [`… and ${problems.length - LISTED} more`] : [];
    throw new CliError([...problems.slice(0, LISTED), ...more].map(printable).join('\n'));
  }
  return stages;
}

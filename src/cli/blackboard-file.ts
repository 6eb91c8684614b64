import { templatedSession, type BlackboardInput } from '../core/index.ts';
import { CliError } from './exit.ts';
import { printable } from './format.ts';
import { configRegex, readConfigFile } from './config-file.ts';

/**
 * A blackboard session from JSON or YAML: `{"sections": ["hypotheses", "critiques"], "prompt": "…{section}…{board}…",
 * "maxRounds": 5, "until": "regex"}` — each section's `role=` endpoints answer the prompt with {section}
 * its name and {board} every entry so far; the session ends early once an entry matches `until`.
 * Every problem is named, all at once; a bad file is bad input (exit 2).
 */
export async function readBlackboard(path: string): Promise<BlackboardInput> {
  const shown = printable(path);
  const raw = await readConfigFile(path);
  const c = (raw ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  const sections = c.sections;
  if (!Array.isArray(sections) || !sections.length || !sections.every((s) => typeof s === 'string' && /^[\w.-]+$/.test(s))) {
    problems.push(`${shown}: "sections" must be a non-empty list of role names (letters, digits, . _ -)`);
  }
  if (typeof c.prompt !== 'string' || !c.prompt.includes('{board}')) problems.push(`${shown}: "prompt" must be a string containing {board} (and may contain {section})`);
  const rounds = c.maxRounds ?? 10;
  if (!Number.isInteger(rounds) || (rounds as number) < 1 || (rounds as number) > 1000) problems.push(`${shown}: "maxRounds" must be a whole number from 1 to 1,000`);
  const until = configRegex(c.until, shown, 'until', problems);
  if (problems.length) throw new CliError(problems.map(printable).join('\n'));
  return templatedSession(sections as string[], c.prompt as string, rounds as number, until);
}

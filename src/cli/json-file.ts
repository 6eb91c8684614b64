import { readFile } from 'node:fs/promises';
import { CliError } from './exit.ts';
import { printable } from './format.ts';

/** A JSON config file (pipeline stages, a blackboard session): unreadable or invalid is bad input (exit 2), one line. */
export async function readJsonFile(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(`${printable(path)}: ${code ? `cannot read it (${code})` : `not valid JSON (${(err as Error).message})`}`);
  }
}

/** An optional regular-expression field of a config: undefined when absent; a bad one adds a problem naming `where` and `field`. */
export function configRegex(value: unknown, where: string, field: string, problems: string[]): RegExp | undefined {
  if (value === undefined) return undefined;
  try {
    return new RegExp(String(value));
  } catch (err) {
    problems.push(`${where}: "${field}" is not a regular expression (${(err as Error).message})`);
    return undefined;
  }
}

import { readFile } from 'node:fs/promises';
import { JSON_SCHEMA, load } from 'js-yaml';
import { CliError } from './exit.ts';
import { printable } from './format.ts';

/**
 * A config file (pipeline stages, a blackboard session): JSON, or YAML when it is named `.yaml` / `.yml`
 * (read with the JSON schema: no dates or other implicit types). Unreadable or invalid is bad input (exit 2), one line.
 */
export async function readConfigFile(path: string): Promise<unknown> {
  const yaml = /\.ya?ml$/i.test(path);
  try {
    const text = await readFile(path, 'utf8');
    return yaml ? load(text, { schema: JSON_SCHEMA }) : JSON.parse(text);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = (err as Error).message.split('\n')[0];
    throw new CliError(`${printable(path)}: ${code ? `cannot read it (${code})` : `not valid ${yaml ? 'YAML' : 'JSON'} (${why})`}`);
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

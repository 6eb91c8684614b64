import { readFile } from 'node:fs/promises';
import type { Endpoint } from '../endpoint.ts';
import { HostfileError, type HostfileIssue } from './issue.ts';
import { parseHostfile } from './parse.ts';

export interface LoadedHostfile {
  endpoints: Endpoint[];
  warnings: HostfileIssue[];
}

/** Parses hostfile text; throws HostfileError listing every error if there is any. */
export function hostfileFromText(text: string, file = '<hostfile>'): LoadedHostfile {
  const { endpoints, errors, warnings } = parseHostfile(text, file);
  if (errors.length > 0) throw new HostfileError(errors);
  return { endpoints, warnings };
}

/** Reads and parses a hostfile; issues are reported against `path` as given. */
export async function loadHostfile(path: string): Promise<LoadedHostfile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new Error(`cannot read hostfile ${path}: ${(cause as Error).message}`, { cause });
  }
  return hostfileFromText(text, path);
}

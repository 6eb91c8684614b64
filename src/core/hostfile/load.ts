import { readFile } from 'node:fs/promises';
import type { Endpoint } from '../endpoints/endpoint.ts';
import { decodeUtf8 } from '../results/text-file.ts';
import { HostfileError, makeIssue, type HostfileIssue } from './issue.ts';
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
  return hostfileFromText(await readHostfileText(path), path);
}

/** A hostfile's text; throws when it cannot be read or is not UTF-8 text. */
export async function readHostfileText(path: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (cause) {
    throw new Error(`cannot read hostfile ${path}: ${(cause as Error).message}`, { cause });
  }
  const decoded = decodeUtf8(bytes);
  if ('notText' in decoded) throw new HostfileError([makeIssue(path, decoded.notText.line, `${decoded.notText.problem}; a hostfile must be UTF-8 text`)]);
  return decoded.text;
}

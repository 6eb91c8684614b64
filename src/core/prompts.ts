import { readFile } from 'node:fs/promises';
import { cappedList } from './hostfile/issue.ts';
import type { PromptInput } from './result.ts';

/** A prompt file that cannot be read as prompts; names the file and line. */
export class PromptFileError extends Error {
  override name = 'PromptFileError';
}

/**
 * Prompts from a `.jsonl` file (`{"prompt": ...}` per line; other fields go to `input`) or plain
 * text (one prompt per non-blank line). `index` counts prompts, not lines.
 */
export function parsePrompts(text: string, file = '<prompts>'): PromptInput[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const jsonl = file.endsWith('.jsonl') || file.endsWith('.ndjson') || lines.find((l) => l.trim())?.trim().startsWith('{');
  const prompts: PromptInput[] = [];
  const errors: string[] = [];
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    if (!jsonl) {
      prompts.push({ prompt: line });
      return;
    }
    const where = `${file}:${i + 1}`;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (err) {
      errors.push(`${where}: not valid JSON (${clip((err as Error).message)})`);
      return;
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      errors.push(`${where}: expected a JSON object with a "prompt" field`);
      return;
    }
    const { prompt, ...input } = row as Record<string, unknown>;
    if (typeof prompt !== 'string') errors.push(`${where}: "prompt" must be a string`);
    else prompts.push({ prompt, input });
  });
  if (errors.length) throw new PromptFileError(cappedList(errors));
  if (!prompts.length) throw new PromptFileError(`${file}: no prompts`);
  return prompts;
}

/** Reads a prompt file, refusing what is not UTF-8 text (a binary or compressed file) before parsing it. */
export async function loadPrompts(path: string, what = 'prompts'): Promise<PromptInput[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new PromptFileError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parsePrompts(decodeText(bytes, path), path);
}

const strict = new TextDecoder('utf-8', { fatal: true });

/**
 * UTF-8 text, or a PromptFileError naming the first line that is not: a NUL byte or an invalid
 * sequence means a binary or compressed file, which would otherwise go out as garbage prompts.
 */
export function decodeText(bytes: Uint8Array, file: string): string {
  if (!bytes.includes(0) && isUtf8(bytes)) return strict.decode(bytes);
  const hint = bytes[0] === 0x1f && bytes[1] === 0x8b ? ' (it looks gzip-compressed)' : ' (a binary file?)';
  // No UTF-8 sequence holds a newline byte, so the bad bytes lie within one line: name it.
  for (let start = 0, line = 1; start <= bytes.length; line++) {
    const newline = bytes.indexOf(0x0a, start);
    const end = newline < 0 ? bytes.length : newline;
    const row = bytes.subarray(start, end);
    const why = row.includes(0) ? 'holds a NUL byte' : isUtf8(row) ? undefined : 'is not valid UTF-8';
    if (why) throw new PromptFileError(`${file}:${line}: ${why}; prompts must be UTF-8 text${hint}`);
    start = end + 1;
  }
  throw new PromptFileError(`${file}: is not UTF-8 text${hint}`);
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** A parser's message about a line, short enough for one terminal line. */
function clip(message: string): string {
  return message.length > 160 ? `${message.slice(0, 160)}…` : message;
}

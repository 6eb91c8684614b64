import { readFile } from 'node:fs/promises';
import { cappedList } from './hostfile/issue.ts';
import type { PromptInput } from './result.ts';
import { decodeUtf8 } from './text-file.ts';

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
  const decoded = decodeUtf8(bytes);
  if ('notText' in decoded) throw new PromptFileError(`${path}:${decoded.notText.line}: ${decoded.notText.problem}; ${what} must be UTF-8 text`);
  return parsePrompts(decoded.text, path);
}

/** A parser's message about a line, short enough for one terminal line. */
function clip(message: string): string {
  return message.length > 160 ? `${message.slice(0, 160)}…` : message;
}

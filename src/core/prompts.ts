import { readFile } from 'node:fs/promises';
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
      errors.push(`${where}: not valid JSON (${(err as Error).message})`);
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
  if (errors.length) throw new PromptFileError(errors.join('\n'));
  if (!prompts.length) throw new PromptFileError(`${file}: no prompts`);
  return prompts;
}

export async function loadPrompts(path: string): Promise<PromptInput[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new PromptFileError(`cannot read prompts ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parsePrompts(text, path);
}

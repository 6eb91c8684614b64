import { readFile } from 'node:fs/promises';
import { cappedList } from '../hostfile/issue.ts';
import type { PromptInput, PromptList } from './result.ts';
import { notText } from '../results/text-file.ts';

/** A prompt file that cannot be read as prompts; names the file and line. */
export class PromptFileError extends Error {
  override name = 'PromptFileError';
}

/**
 * A prompts file held as its bytes and where each prompt's line is (12 bytes a prompt): a prompt
 * becomes a string only when asked for, so a million-prompt run holds the file, not a million
 * objects (the strings, their objects and the file they were cut from cost ~130 bytes a prompt).
 */
export class PromptFile implements PromptList {
  private constructor(
    private readonly bytes: Buffer,
    private readonly starts: Float64Array,
    private readonly ends: Float64Array,
    private readonly jsonl: boolean,
    readonly length: number,
  ) {}

  /**
   * `.jsonl` (`{"prompt": ...}` per line; other fields go to `input`) or plain text (one prompt per
   * non-blank line); `index` counts prompts, not lines. Every line is checked now, so bad input is
   * refused before any request, naming its file and line.
   */
  static of(bytes: Buffer, file = '<prompts>'): PromptFile {
    const from = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0; // a byte-order mark
    const jsonl = file.endsWith('.jsonl') || file.endsWith('.ndjson') || firstLine(bytes, from).startsWith('{');
    let starts: Float64Array = new Float64Array(1024);
    let ends: Float64Array = new Float64Array(1024);
    let count = 0;
    const errors: string[] = [];
    for (let start = from, line = 1; start < bytes.length; line++) {
      const newline = bytes.indexOf(0x0a, start);
      const next = newline < 0 ? bytes.length : newline + 1;
      const end = newline < 0 ? bytes.length : newline > start && bytes[newline - 1] === 0x0d ? newline - 1 : newline;
      const text = bytes.toString('utf8', start, end);
      if (text.trim()) {
        const problem = jsonl ? problemOf(text) : null;
        if (problem) errors.push(`${file}:${line}: ${problem}`);
        else {
          if (count === starts.length) [starts, ends] = [grown(starts), grown(ends)];
          starts[count] = start;
          ends[count++] = end;
        }
      }
      start = next;
    }
    if (errors.length) throw new PromptFileError(cappedList(errors));
    if (!count) throw new PromptFileError(`${file}: no prompts`);
    return new PromptFile(bytes, starts, ends, jsonl, count);
  }

  at(index: number): PromptInput | undefined {
    if (!(index >= 0 && index < this.length)) return undefined;
    const text = this.bytes.toString('utf8', this.starts[index], this.ends[index]);
    if (!this.jsonl) return { prompt: text };
    const { prompt, ...input } = JSON.parse(text) as { prompt: string };
    return { prompt, input };
  }

  toArray(): PromptInput[] {
    return Array.from({ length: this.length }, (_, i) => this.at(i)!);
  }
}

/** Prompts from text in memory (a document, a pasted list); see `PromptFile.of`. */
export function parsePrompts(text: string, file = '<prompts>'): PromptInput[] {
  return PromptFile.of(Buffer.from(text, 'utf8'), file).toArray();
}

/** Reads a prompt file, refusing what is not UTF-8 text (a binary or compressed file) before parsing it. */
export async function loadPrompts(path: string, what = 'prompts'): Promise<PromptFile> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new PromptFileError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const bad = notText(bytes);
  if (bad) throw new PromptFileError(`${path}:${bad.line}: ${bad.problem}; ${what} must be UTF-8 text`);
  return PromptFile.of(bytes, path);
}

/** Some prompts of a list, by their indices in it (what a resumed run or a shard sends). */
export function promptsAt(list: PromptList, indices: ArrayLike<number>): PromptList {
  return { length: indices.length, at: (k) => (k >= 0 && k < indices.length ? list.at(indices[k]!) : undefined) };
}

/** Why a JSONL line is not a prompt, or null. */
function problemOf(line: string): string | null {
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch (err) {
    return `not valid JSON (${clip((err as Error).message)})`;
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return 'expected a JSON object with a "prompt" field';
  return typeof (row as { prompt?: unknown }).prompt === 'string' ? null : '"prompt" must be a string';
}

function firstLine(bytes: Buffer, from: number): string {
  for (let start = from; start < bytes.length; ) {
    const newline = bytes.indexOf(0x0a, start);
    const end = newline < 0 ? bytes.length : newline;
    const text = bytes.toString('utf8', start, end).trim();
    if (text) return text;
    start = end + 1;
  }
  return '';
}

function grown(a: Float64Array): Float64Array {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}

/** A parser's message about a line, short enough for one terminal line. */
function clip(message: string): string {
  return message.length > 160 ? `${message.slice(0, 160)}…` : message;
}

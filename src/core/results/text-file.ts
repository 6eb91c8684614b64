import { isUtf8 } from 'node:buffer';

/** Where a file stops being UTF-8 text: the first line holding a NUL byte or an invalid sequence. */
export interface NotText {
  line: number;
  /** `holds a NUL byte (it looks gzip-compressed)`, `is not valid UTF-8 (a binary file?)`. */
  problem: string;
}

/**
 * The text of a file that must be UTF-8, or where it is not: a binary or compressed file read as
 * text would otherwise turn into garbage prompts or endpoints.
 */
export function decodeUtf8(bytes: Uint8Array): { text: string } | { notText: NotText } {
  const problem = notText(bytes);
  return problem ? { notText: problem } : { text: new TextDecoder().decode(bytes) };
}

/** Where bytes that must be UTF-8 text are not (see `decodeUtf8`), or null: checked without making a string of them. */
export function notText(bytes: Uint8Array): NotText | null {
  if (!bytes.includes(0) && isUtf8(bytes)) return null;
  const hint = bytes[0] === 0x1f && bytes[1] === 0x8b ? ' (it looks gzip-compressed)' : ' (a binary file?)';
  // No UTF-8 sequence holds a newline byte, so the bad bytes lie within one line: name it.
  let line = 1;
  for (let start = 0; start <= bytes.length; line++) {
    const newline = bytes.indexOf(0x0a, start);
    const end = newline < 0 ? bytes.length : newline;
    const row = bytes.subarray(start, end);
    if (row.includes(0)) return { line, problem: `holds a NUL byte${hint}` };
    if (!isUtf8(row)) break;
    start = end + 1;
  }
  return { line, problem: `is not valid UTF-8${hint}` };
}

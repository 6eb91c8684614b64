import { badRequest } from './errors.ts';

/**
 * The simulated model's tokenizer. It deliberately disagrees with the client's chars/4 estimate the
 * way real BPE vocabularies do: ASCII letters go in chunks of up to 4 (the first with the word's
 * leading space), but every digit, punctuation mark, other whitespace and non-ASCII character (CJK)
 * is a token of its own. English prose comes out near chars/4; numbers, code and CJK well over.
 *
 * Ids are a reversible encoding, not a learned vocabulary, so every simulated server agrees on
 * them without shared state: specials first, then one id per Unicode code point, then letter chunks.
 */

/** ChatML's and harmony's specials (ids 0…7 of the CHAR_BASE reserved). */
const SPECIAL_TOKENS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|start|>', '<|message|>', '<|end|>', '<|channel|>', '<|return|>'] as const;
const SPECIAL = new RegExp(SPECIAL_TOKENS.map((s) => s.replace(/[|]/g, '\\|')).join('|'), 'g');
const CHAR_BASE = 16;
const WORD_BASE = CHAR_BASE + 0x110000;
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const MAX_WORD_LETTERS = 4;
const MAX_WORD_CODE = wordCode('z'.repeat(MAX_WORD_LETTERS)) * 2 + 1;

/** Specials (as written in text, like HF tokenizers parse them), word chunks, else one code point. */
const PIECE = new RegExp(`${SPECIAL_TOKENS.map((s) => s.replace(/[|]/g, '\\|')).join('|')}| ?[A-Za-z]{1,${MAX_WORD_LETTERS}}|[^]`, 'gu');

/** The text split into token strings; they concatenate back to the text. */
export function tokenPieces(text: string): string[] {
  return text.match(PIECE) ?? [];
}

/**
 * The pieces as vLLM's `/tokenize` returns them with `return_token_strs`: `convert_ids_to_tokens`, the
 * tokenizer's own strings, here in GPT-2's byte-level alphabet as Qwen's, Llama 3's and gpt-oss's are
 * (a space is `Ġ`, a newline `Ċ`): not text, which a client must read back byte by byte.
 */
export function tokenStrings(text: string): string[] {
  return tokenPieces(text).map((piece) => (SPECIAL_TOKENS as readonly string[]).includes(piece) ? piece : [...Buffer.from(piece, 'utf8')].map((b) => BYTE_CHARS[b]).join(''));
}

/** Byte b's character in the byte-level alphabet: printable Latin-1 stands for itself, the other bytes for U+0100 onwards in order. */
const BYTE_CHARS: readonly string[] = (() => {
  let next = 0x100;
  const printable = (b: number) => (b > 0x20 && b < 0x7f) || (b > 0xa0 && b !== 0xad);
  return Array.from({ length: 256 }, (_, b) => String.fromCharCode(printable(b) ? b : next++));
})();

/** The text as vLLM detokenizes it with `skip_special_tokens` (its default): special tokens left out. */
export function withoutSpecials(text: string): string {
  // Every special token opens with `<|`: most outputs have none, and skip the regex.
  return text.includes('<|') ? text.replace(SPECIAL, '') : text;
}

export function countTokens(text: string): number {
  let count = 0;
  PIECE.lastIndex = 0;
  while (PIECE.exec(text)) count++;
  return count;
}

export function encode(text: string): number[] {
  return tokenPieces(text).map(pieceId);
}

/** Token ids back to text; throws a 400 for an id outside the vocabulary, as vLLM does. */
export function decode(ids: readonly number[]): string {
  return ids.map(pieceOf).join('');
}

/**
 * The simulated model's output tokens are whole words (`" voluptate"`, `"completion:"`), several
 * pieces of the prompt vocabulary; `return_token_ids` must still give one id per output token (vLLM's
 * `len(token_ids) == completion_tokens`) that `/detokenize` reads back. Such words get ids of their
 * own above the fixed vocabulary, kept for the process's life up to OUTPUT_WORDS (then the oldest
 * words' ids stop decoding: a 400, as for any id outside the vocabulary).
 */
const OUTPUT_BASE = WORD_BASE + MAX_WORD_CODE + 1;
const OUTPUT_WORDS = 200_000;
const outputIds = new Map<string, number>();
const outputWords = new Map<number, string>();
let nextOutput = OUTPUT_BASE;

/** The one id of an output token. */
export function outputTokenId(token: string): number {
  const known = outputIds.get(token);
  if (known !== undefined) return known;
  const pieces = encode(token);
  if (pieces.length === 1) return pieces[0]!;
  const id = nextOutput++;
  outputIds.set(token, id);
  outputWords.set(id, token);
  if (outputWords.size > OUTPUT_WORDS) {
    const [oldId, oldWord] = outputWords.entries().next().value!;
    outputWords.delete(oldId);
    outputIds.delete(oldWord);
  }
  return id;
}

/** Ids of a token-id prompt, checked against the vocabulary. */
export function checkTokenIds(ids: readonly number[]): void {
  for (const id of ids) pieceOf(id);
}

function pieceId(piece: string): number {
  const special = (SPECIAL_TOKENS as readonly string[]).indexOf(piece);
  if (special >= 0) return special;
  const letters = piece.startsWith(' ') ? piece.slice(1) : piece;
  if (/^[A-Za-z]+$/.test(letters)) return WORD_BASE + wordCode(letters) * 2 + (letters === piece ? 0 : 1);
  return CHAR_BASE + piece.codePointAt(0)!;
}

function pieceOf(id: number): string {
  if (Number.isSafeInteger(id) && id >= 0) {
    if (id < SPECIAL_TOKENS.length) return SPECIAL_TOKENS[id]!;
    if (id >= CHAR_BASE && id < WORD_BASE) return String.fromCodePoint(id - CHAR_BASE);
    const code = id - WORD_BASE;
    if (code >= 2 && code <= MAX_WORD_CODE) return (code % 2 ? ' ' : '') + wordLetters(Math.floor(code / 2));
    const word = outputWords.get(id);
    if (word !== undefined) return word;
  }
  throw badRequest(`Token id ${id} is out of vocabulary`, 'prompt');
}

/** Bijective base 52, so "a" and "Aa" differ. */
function wordCode(letters: string): number {
  let code = 0;
  for (const ch of letters) code = code * LETTERS.length + LETTERS.indexOf(ch) + 1;
  return code;
}

function wordLetters(code: number): string {
  let letters = '';
  while (code > 0) {
    const digit = (code - 1) % LETTERS.length;
    letters = LETTERS[digit]! + letters;
    code = (code - 1 - digit) / LETTERS.length;
  }
  return letters;
}

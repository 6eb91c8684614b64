import { speaksHarmony } from './harmony.ts';

/**
 * A conversation as the server's chat template renders it, with the user's content cut out: the
 * chat endpoint's prompt for any content is `prefix + content + suffix` (the content stripped of
 * surrounding whitespace first when the template trims it). Rendered once per model, system prompt
 * and template kwargs, so a templated batch costs a few requests, not one per prompt.
 */
export interface Skeleton {
  prefix: string;
  suffix: string;
  /** The template strips the content (jinja's `| trim`, as Llama 3's does). */
  trims: boolean;
  /** The model speaks harmony (gpt-oss): answers keep their special tokens to be split. */
  harmony: boolean;
}

/**
 * Two contents unlike any template text, in mixed case with digits (a template that changes case
 * changes them); the second, wrapped in whitespace, shows whether the template trims.
 */
export const SENTINELS = ['SwarmLab7sentinelQa', ' \n\tSwarmLab9sentinelZb \n'] as const;

/** One rendering of a conversation by `/tokenize`: its ids and the tokenizer's piece for each. */
export interface Rendered {
  tokens: readonly number[];
  strs: readonly string[];
}

export type SkeletonOutcome =
  | { skeleton: Skeleton; /** The pieces were read with a lossy decoding: the text must be checked against the server's tokens. */ check: boolean }
  | { skeleton: null; reason: string };

/** The template's text around the user's content, from the renderings of the two sentinels. */
export function skeletonOf(a: Rendered, b: Rendered): SkeletonOutcome {
  // Read back by a lossless decoder (or found at all): then the template, not the reading, is at fault.
  let read = false;
  for (const decoder of DECODERS) {
    const textA = decoder.decode(a.strs);
    const textB = decoder.decode(b.strs);
    if (textA === null || textB === null) continue;
    if (!decoder.lossy) read = true;
    const at = textA.indexOf(SENTINELS[0]);
    if (at < 0 || textA.indexOf(SENTINELS[0], at + 1) >= 0) continue;
    read = true;
    const prefix = textA.slice(0, at);
    const suffix = textA.slice(at + SENTINELS[0].length);
    const trims = textB === prefix + pythonStrip(SENTINELS[1]) + suffix;
    if (!trims && textB !== prefix + SENTINELS[1] + suffix) continue;
    return { skeleton: { prefix, suffix, trims, harmony: speaksHarmony(textA) }, check: decoder.lossy };
  }
  return {
    skeleton: null,
    reason: read
      ? 'the chat template does more to a prompt than place it (it rewrites the content, or what surrounds it depends on it)'
      : "the server's token pieces do not read back into the rendered text",
  };
}

/** The chat endpoint's prompt text for `content`. */
export function fill(skeleton: Skeleton, content: string): string {
  return skeleton.prefix + (skeleton.trims ? pythonStrip(content) : content) + skeleton.suffix;
}

/** What jinja's `trim` does in vLLM (Python's `str.strip()`): its whitespace includes \x1c–\x1f and \x85, not \ufeff as JavaScript's. */
function pythonStrip(text: string): string {
  return text.replace(/^[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g, '');
}

interface Decoder {
  /** The text the pieces stand for; null when they are not in this decoder's form. */
  decode(pieces: readonly string[]): string | null;
  /** Some texts read back differently (SentencePiece's dummy-prefix space). */
  lossy: boolean;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function bytesToText(bytes: number[]): string | null {
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    return null;
  }
}

/** GPT-2's byte-level alphabet (tiktoken, Llama 3, Qwen, gpt-oss): each byte is one printable character. */
const BYTE_OF = (() => {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const map = new Map<string, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) map.set(String.fromCharCode(printable(b) ? b : 256 + extra++), b);
  return map;
})();

const DECODERS: readonly Decoder[] = [
  {
    // Byte-level BPE: every character of a piece stands for one byte.
    decode(pieces) {
      const bytes: number[] = [];
      for (const piece of pieces) {
        for (const ch of piece) {
          const b = BYTE_OF.get(ch);
          if (b === undefined) return null;
          bytes.push(b);
        }
      }
      return bytesToText(bytes);
    },
    lossy: false,
  },
  // Pieces that are text already (servers that detokenize each token, as our simulator and llama engine do);
  // tried after the byte-level alphabet, which cannot read a raw space or newline, and never on SentencePiece's ▁.
  { decode: (pieces) => (pieces.some((p) => p.includes('\ufffd') || p.includes('\u2581')) ? null : pieces.join('')), lossy: false },
  {
    // SentencePiece (Llama 2, Mistral): ▁ for a space, <0xNN> for a byte of its byte fallback.
    decode(pieces) {
      const bytes: number[] = [];
      for (const piece of pieces) {
        const byte = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
        if (byte) bytes.push(parseInt(byte[1]!, 16));
        else for (const b of Buffer.from(piece.replaceAll('\u2581', ' '), 'utf8')) bytes.push(b);
      }
      return bytesToText(bytes);
    },
    lossy: true,
  },
];

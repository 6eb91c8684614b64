import { mulberry32 } from '../random.ts';

/**
 * A tiny llama-architecture model, written as GGUF from a fixed seed: random F32 weights (so its
 * text is gibberish), but a real SentencePiece vocabulary with byte fallback and a ChatML chat
 * template, so llama.cpp tokenizes, samples, counts and streams for real. ~0.5 MB, loads in < 1 s.
 */
export const TINY_CONTEXT = 1024;
const EMBED = 64;
const HEADS = 4;
const LAYERS = 2;
const FEED_FORWARD = 128;
const ALIGNMENT = 32;

export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

// SentencePiece token types.
const NORMAL = 1;
const UNKNOWN = 2;
const CONTROL = 3;
const BYTE = 6;

const WORDS = (
  'the of and to a in is you that it he was for on are as with his they at be this have from or one had by word but not what all ' +
  'were we when your can said there use an each which she do how their if will up other about out many then them these so some her ' +
  'would make like him into time has look two more write go see number no way could people my than first water been call who oil ' +
  'its now find long down day did get come made may part user assistant system swarm prompt answer model question hello world'
).split(' ');

interface Vocab {
  tokens: string[];
  scores: number[];
  types: number[];
}

/** Specials, 256 byte tokens, characters, then every prefix of each `word` and `▁word` (so SPM merges can reach it), longer ones preferred. */
function vocabulary(): Vocab {
  const tokens = ['<unk>', '<s>', '</s>', '<|im_start|>', '<|im_end|>'];
  const types = [UNKNOWN, CONTROL, CONTROL, CONTROL, CONTROL];
  const scores = [0, 0, 0, 0, 0];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(BYTE);
    scores.push(0);
  }
  const pieces = new Set<string>();
  for (const c of '▁abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?\'":;-()') pieces.add(c);
  for (const word of WORDS) {
    for (const piece of [word, `▁${word}`]) for (let end = 2; end <= piece.length; end++) pieces.add(piece.slice(0, end));
  }
  [...pieces].forEach((piece, i) => {
    tokens.push(piece);
    types.push(NORMAL);
    scores.push(-1000 + [...piece].length * 10 - i * 1e-3);
  });
  return { tokens, scores, types };
}

/** The model file's bytes; the same on every machine. */
export function tinyGguf(): Buffer {
  const vocab = vocabulary();
  const nVocab = vocab.tokens.length;
  const random = mulberry32(0x5eed);
  const w = new GgufWriter();
  const metadata: Array<[string, Value]> = [
    ['general.architecture', str('llama')],
    ['general.name', str('swarm-lab-tiny')],
    ['general.alignment', u32(ALIGNMENT)],
    ['llama.context_length', u32(TINY_CONTEXT)],
    ['llama.embedding_length', u32(EMBED)],
    ['llama.block_count', u32(LAYERS)],
    ['llama.feed_forward_length', u32(FEED_FORWARD)],
    ['llama.attention.head_count', u32(HEADS)],
    ['llama.attention.head_count_kv', u32(HEADS)],
    ['llama.rope.dimension_count', u32(EMBED / HEADS)],
    ['llama.attention.layer_norm_rms_epsilon', f32(1e-5)],
    ['tokenizer.ggml.model', str('llama')],
    ['tokenizer.ggml.tokens', { type: 'array', of: 'string', values: vocab.tokens }],
    ['tokenizer.ggml.scores', { type: 'array', of: 'f32', values: vocab.scores }],
    ['tokenizer.ggml.token_type', { type: 'array', of: 'i32', values: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', u32(0)],
    ['tokenizer.ggml.bos_token_id', u32(1)],
    ['tokenizer.ggml.eos_token_id', u32(2)],
    ['tokenizer.ggml.eot_token_id', u32(4)],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
    // No space invented after a special token or at the start: detokenize(tokenize(text)) is text.
    ['tokenizer.ggml.add_space_prefix', { type: 'bool', value: false }],
    ['tokenizer.chat_template', str(CHATML_TEMPLATE)],
  ];
  const uniform = (n: number, scale: number): Float32Array => Float32Array.from({ length: n }, () => (random() * 2 - 1) * scale);
  const ones = (n: number): Float32Array => new Float32Array(n).fill(1);
  // [name, dims (innermost first, as GGUF's ne), data]
  const tensors: Array<[string, number[], Float32Array]> = [
    ['token_embd.weight', [EMBED, nVocab], uniform(EMBED * nVocab, 1)],
    ['output_norm.weight', [EMBED], ones(EMBED)],
    ['output.weight', [EMBED, nVocab], uniform(EMBED * nVocab, 4 / Math.sqrt(EMBED))],
  ];
  const proj = 1 / Math.sqrt(EMBED);
  for (let l = 0; l < LAYERS; l++) {
    const b = `blk.${l}`;
    tensors.push(
      [`${b}.attn_norm.weight`, [EMBED], ones(EMBED)],
      [`${b}.attn_q.weight`, [EMBED, EMBED], uniform(EMBED * EMBED, proj)],
      [`${b}.attn_k.weight`, [EMBED, EMBED], uniform(EMBED * EMBED, proj)],
      [`${b}.attn_v.weight`, [EMBED, EMBED], uniform(EMBED * EMBED, proj)],
      [`${b}.attn_output.weight`, [EMBED, EMBED], uniform(EMBED * EMBED, proj)],
      [`${b}.ffn_norm.weight`, [EMBED], ones(EMBED)],
      [`${b}.ffn_gate.weight`, [EMBED, FEED_FORWARD], uniform(EMBED * FEED_FORWARD, proj)],
      [`${b}.ffn_up.weight`, [EMBED, FEED_FORWARD], uniform(EMBED * FEED_FORWARD, proj)],
      [`${b}.ffn_down.weight`, [FEED_FORWARD, EMBED], uniform(FEED_FORWARD * EMBED, 1 / Math.sqrt(FEED_FORWARD))],
    );
  }

  w.raw(Buffer.from('GGUF', 'latin1'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(metadata.length);
  for (const [key, value] of metadata) {
    w.string(key);
    w.value(value);
  }
  let offset = 0;
  for (const [name, dims, data] of tensors) {
    w.string(name);
    w.u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(0); // GGML_TYPE_F32
    w.u64(offset);
    offset = align(offset + data.byteLength);
  }
  w.pad();
  for (const [, , data] of tensors) {
    w.raw(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    w.pad();
  }
  return w.bytes();
}

type Value =
  | { type: 'string'; value: string }
  | { type: 'u32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'array'; of: 'string'; values: string[] }
  | { type: 'array'; of: 'f32' | 'i32'; values: number[] };

const str = (value: string): Value => ({ type: 'string', value });
const u32 = (value: number): Value => ({ type: 'u32', value });
const f32 = (value: number): Value => ({ type: 'f32', value });
const align = (n: number): number => Math.ceil(n / ALIGNMENT) * ALIGNMENT;

// GGUF value type ids.
const TYPE_ID = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;

class GgufWriter {
  private readonly parts: Buffer[] = [];
  private length = 0;

  raw(b: Buffer): void {
    this.parts.push(b);
    this.length += b.length;
  }

  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.raw(b);
  }

  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.raw(b);
  }

  string(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.raw(b);
  }

  value(v: Value): void {
    this.u32(v.type === 'array' ? TYPE_ID.array : TYPE_ID[v.type]);
    if (v.type === 'string') return this.string(v.value);
    if (v.type === 'bool') return this.raw(Buffer.from([v.value ? 1 : 0]));
    if (v.type === 'u32') return this.u32(v.value);
    if (v.type === 'f32') return this.raw(floats([v.value]));
    this.u32(TYPE_ID[v.of]);
    this.u64(v.values.length);
    if (v.of === 'string') for (const s of v.values) this.string(s);
    else if (v.of === 'f32') this.raw(floats(v.values));
    else this.raw(Buffer.from(Int32Array.from(v.values).buffer));
  }

  pad(): void {
    const n = align(this.length) - this.length;
    if (n > 0) this.raw(Buffer.alloc(n));
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts, this.length);
  }
}

const floats = (values: number[]): Buffer => Buffer.from(Float32Array.from(values).buffer);

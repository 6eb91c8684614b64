/**
 * Reading a chat template's skeleton from two sentinel renderings, in the piece forms real tokenizers
 * give (`convert_ids_to_tokens`): byte-level BPE, SentencePiece, or plain text.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fill, SENTINELS, skeletonOf, type Rendered } from '../src/core/templating/skeleton.ts';

/** GPT-2's byte-level pieces of a text, one piece per character's bytes. */
function byteLevel(text: string): string[] {
  let next = 0x100;
  const printable = (b: number) => (b > 0x20 && b < 0x7f) || (b > 0xa0 && b !== 0xad);
  const chars = Array.from({ length: 256 }, (_, b) => String.fromCharCode(printable(b) ? b : next++));
  return [...text].map((c) => [...Buffer.from(c, 'utf8')].map((b) => chars[b]).join(''));
}

/** SentencePiece pieces: ▁ for a space, <0x0A> for a byte of its byte fallback. */
const sentencePiece = (text: string): string[] => [...text].map((c) => (c === '\n' ? '<0x0A>' : c === '\t' ? '<0x09>' : c.replace(' ', '\u2581')));

const rendered = (pieces: string[]): Rendered => ({ tokens: pieces.map((_, i) => i), strs: pieces });
const llama3 = (content: string) => `<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n${content.trim()}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n`;
const chatml = (content: string) => `<|im_start|>system\nBe brief. Ünïcode ok.<|im_end|>\n<|im_start|>user\n${content}<|im_end|>\n<|im_start|>assistant\n`;

describe('chat-template skeletons', () => {
  it('byte-level pieces read back exactly, the system prompt (non-ASCII too) kept in the prefix', () => {
    const outcome = skeletonOf(rendered(byteLevel(chatml(SENTINELS[0]))), rendered(byteLevel(chatml(SENTINELS[1]))));
    assert.ok(outcome.skeleton, JSON.stringify(outcome));
    assert.equal(outcome.check, false, 'lossless: no check request');
    assert.equal(fill(outcome.skeleton, 'Say hi.'), chatml('Say hi.'));
    assert.equal(outcome.skeleton.trims, false);
  });

  it('a template that trims (Llama 3): the prompt is trimmed as Python would', () => {
    const outcome = skeletonOf(rendered(byteLevel(llama3(SENTINELS[0]))), rendered(byteLevel(llama3(SENTINELS[1]))));
    assert.ok(outcome.skeleton);
    assert.equal(outcome.skeleton.trims, true);
    assert.equal(fill(outcome.skeleton, ' \n padded\t'), llama3('padded'));
  });

  it('SentencePiece pieces read back, but only with a check against the server (its reading is lossy)', () => {
    const outcome = skeletonOf(rendered(sentencePiece(chatml(SENTINELS[0]))), rendered(sentencePiece(chatml(SENTINELS[1]))));
    assert.ok(outcome.skeleton);
    assert.equal(outcome.check, true);
    assert.equal(fill(outcome.skeleton, 'x y'), chatml('x y'));
  });

  it('text pieces (our engines) read back as they are', () => {
    const split = (t: string) => t.match(/[^]{1,3}/g)!;
    const outcome = skeletonOf(rendered(split(chatml(SENTINELS[0]))), rendered(split(chatml(SENTINELS[1]))));
    assert.ok(outcome.skeleton);
    assert.equal(outcome.check, false);
  });

  it('a template that changes case, or puts something that depends on the content around it, has no skeleton', () => {
    const upper = (c: string) => chatml(c.toUpperCase());
    const counted = (c: string) => chatml(`${c} (${c.length} characters)`);
    for (const template of [upper, counted]) {
      const outcome = skeletonOf(rendered(byteLevel(template(SENTINELS[0]))), rendered(byteLevel(template(SENTINELS[1]))));
      assert.equal(outcome.skeleton, null);
      assert.match((outcome as { reason: string }).reason, /does more to a prompt than place it/);
    }
  });

  it('pieces in no known form are refused with a reason', () => {
    const outcome = skeletonOf(rendered(['\ufffd', 'x']), rendered(['\ufffd', 'y']));
    assert.equal(outcome.skeleton, null);
  });
});
